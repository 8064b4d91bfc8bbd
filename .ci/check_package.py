"""Build localqa's wheel with `python -m build` and check that it carries every file the package
needs at run time besides its modules: the web app's templates and static files, the glossary's TOML, and py.typed."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NEEDED = ["localqa/py.typed", "localqa/**/*.toml", "localqa/serve/templates/*", "localqa/serve/static/*"]


def main() -> int:
    wanted = {str(path.relative_to(REPO)) for pattern in NEEDED for path in REPO.glob(pattern)}
    with tempfile.TemporaryDirectory() as out:
        built = subprocess.run(
            [sys.executable, "-m", "build", "--wheel", "--outdir", out, str(REPO)],
            capture_output=True,
            text=True,
        )
        if built.returncode:
            print(built.stdout + built.stderr, file=sys.stderr)
            return built.returncode
        (wheel,) = Path(out).glob("localqa-*.whl")
        with zipfile.ZipFile(wheel) as archive:
            held = set(archive.namelist())
    missing = sorted(wanted - held)
    if missing:
        print(f"{wheel.name} lacks {len(missing)} file(s): {', '.join(missing)}", file=sys.stderr)
        return 1
    print(f"{wheel.name}: {len(wanted)} package data files present ({', '.join(NEEDED)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
