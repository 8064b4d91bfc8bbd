"""A throwaway PostgreSQL 16 with pgvector, from the `pgserver` wheel's binaries (localqa[postgres]):
initdb in a temporary folder, the server on a free loopback port, gone when stopped. No server
anyone started by hand is ever used.

PostgreSQL refuses to run as root, so as root the server runs as `nobody`. Connections over TCP
need a password (scram-sha-256, the server's default for hosts), so tests exercise the password
the way a team's server asks for it; `PASSWORD` is distinctive, for tests that check it is never
shown.

Run directly (`python tests/postgres_server.py`) it starts one, prints its URL and serves until
interrupted: for benchmarks against a local server.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager, suppress
from pathlib import Path

import psycopg

PASSWORD = "pg-secret-7f3a9c"  # the test server's password: must never appear in any output
USER = "postgres"
TEMPLATE = "localqa_template"  # a database with pgvector installed, copied for each new one


def binaries() -> Path:
    """The PostgreSQL programs the pgserver wheel ships (found without importing it)."""
    spec = importlib.util.find_spec("pgserver")
    if spec is None or spec.origin is None:
        raise RuntimeError("pgserver is not installed: pip install -e '.[dev,postgres]' (make setup does)")
    return Path(spec.origin).parent / "pginstall" / "bin"


def _reachable_by_others(path: Path) -> bool:
    """Whether a user other than the owner may run programs in `path` (every folder above it
    lets others through)."""
    return all(os.stat(folder).st_mode & 0o001 for folder in [path, *path.parents])


def _copy_programs(folder: Path, as_user: dict[str, int]) -> Path:
    """Copy the wheel's PostgreSQL into `folder`, owned by the server's user; the copy's bin
    folder. The programs find their bundled libraries (libpq, ...) through RPATHs relative to
    themselves, `$ORIGIN/../../../pgserver.libs` from pginstall/bin (deeper from lib/postgresql),
    i.e. the folder beside the `pgserver` package. So the copy keeps the installed layout:
    folder/pgserver/pginstall and folder/pgserver.libs."""
    installed = binaries().parent  # .../site-packages/pgserver/pginstall
    package = installed.parent
    copy = folder / package.name / installed.name
    shutil.copytree(installed, copy, symlinks=True)
    copied = [folder / package.name]
    libraries = package.parent / f"{package.name}.libs"  # where auditwheel puts them (Linux wheels)
    if libraries.is_dir():
        shutil.copytree(libraries, folder / libraries.name, symlinks=True)
        copied.append(folder / libraries.name)
    if as_user:  # readable by the server's user, whatever modes the checkout's umask gave them
        for top in copied:
            for path in [top, *top.rglob("*")]:
                os.lchown(path, as_user["user"], as_user["group"])
    return copy / "bin"


def _free_port() -> int:
    with closing(socket.socket()) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PostgresServer:
    def __init__(self, folder: Path, port: int, process: subprocess.Popen[bytes]) -> None:
        self.folder = folder
        self.port = port
        self.process = process
        self._databases = 0

    def url(self, database: str = "postgres", *, password: bool = True) -> str:
        secret = f":{PASSWORD}" if password else ""
        return f"postgresql://{USER}{secret}@127.0.0.1:{self.port}/{database}"

    def admin(self) -> psycopg.Connection[tuple[object, ...]]:
        return psycopg.connect(self.url(), autocommit=True)

    def create_database(self, template: str = TEMPLATE, name: str | None = None) -> str:
        """A new database copied from `template` (which nobody may be connected to); its URL."""
        self._databases += 1
        name = name or f"t{os.getpid()}_{self._databases}"
        with self.admin() as db:
            db.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
        return self.url(name)

    def drop_database(self, name: str) -> None:
        with self.admin() as db:
            db.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # "fast" shutdown: clients are disconnected
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


@contextmanager
def running(*, copy_binaries: bool = False, **settings: str) -> Iterator[PostgresServer]:
    """Start a server (extra `postgres -c` settings as keywords), yield it, stop and delete it."""
    server = start(copy_binaries=copy_binaries, **settings)
    try:
        yield server
    finally:
        server.stop()


def start(*, copy_binaries: bool = False, **settings: str) -> PostgresServer:
    """`copy_binaries`: run a copy of the programs even when the installed ones are reachable
    (they are copied anyway when the server's user cannot reach them)."""
    bin_dir = binaries()
    folder = Path(tempfile.mkdtemp(prefix="localqa-pg-"))
    as_user: dict[str, int] = {}
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        as_user = {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}
        os.chown(folder, nobody.pw_uid, nobody.pw_gid)
    if copy_binaries or (as_user and not _reachable_by_others(bin_dir)):  # a checkout under /root, say
        bin_dir = _copy_programs(folder, as_user)
    data = folder / "data"
    secret = folder / "password"
    secret.write_text(PASSWORD + "\n")
    if as_user:
        os.chown(secret, as_user["user"], as_user["group"])
    try:
        subprocess.run(
            [
                bin_dir / "initdb",
                "-D",
                data,
                "-U",
                USER,
                f"--pwfile={secret}",
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
            ],
            check=True,
            capture_output=True,
            **as_user,  # type: ignore[arg-type]
        )
    except subprocess.CalledProcessError as error:
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(f"initdb failed: {error.stderr.decode(errors='replace')}") from None
    # Throwaway data: nothing is worth an fsync.
    options = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off", **settings}
    for _ in range(5):
        port = _free_port()
        log = (folder / "server.log").open("ab")
        process = subprocess.Popen(
            [
                bin_dir / "postgres",
                "-D",
                data,
                "-h",
                "127.0.0.1",
                "-p",
                str(port),
                "-k",
                folder,
                *(f"-c{key}={value}" for key, value in options.items()),
            ],
            stdout=log,
            stderr=log,
            start_new_session=True,  # a Ctrl-C in the terminal is for the tests, not the server
            preexec_fn=_stop_with_parent,
            **as_user,  # type: ignore[arg-type]
        )
        server = PostgresServer(folder, port, process)
        if _ready(server):
            break
        server.process.kill()
        server.process.wait()
    else:
        log_text = (folder / "server.log").read_text(errors="replace")[-2000:]
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(f"PostgreSQL did not start: {log_text}")
    with server.admin() as db:
        db.execute(f'CREATE DATABASE "{TEMPLATE}"')
    with psycopg.connect(server.url(TEMPLATE), autocommit=True) as db:
        db.execute("CREATE EXTENSION vector")
    return server


def _stop_with_parent() -> None:
    """In the server's process before it starts: a fast shutdown when the process that started
    it dies, even killed (Linux's parent-death signal)."""
    ctypes.CDLL(None).prctl(1, signal.SIGINT)  # PR_SET_PDEATHSIG


def _ready(server: PostgresServer, seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            return False  # the port was taken in the meantime, say
        try:
            with psycopg.connect(server.url(), connect_timeout=2):
                return True
        except psycopg.OperationalError:
            time.sleep(0.1)
    return False


if __name__ == "__main__":
    # Either signal stops it cleanly (server stopped, folder deleted): a shell starts a background
    # job (`&`) with SIGINT ignored, and `kill` sends SIGTERM.
    for stop in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop, signal.default_int_handler)
    settings = dict(arg.split("=", 1) for arg in sys.argv[1:])  # e.g. shared_buffers=1GB
    with running(**settings) as server:
        print(server.create_database(name="localqa"), flush=True)
        with suppress(KeyboardInterrupt):
            signal.pause()
