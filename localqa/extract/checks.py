"""What a file must be before any library reads it: what its extension says it is, and, for the
formats that are zip archives (Word, Excel, PowerPoint, EPUB, XPS, CBZ), an archive that unpacks
within bounded size, time and memory.

A zip bomb declares a huge uncompressed size, or lies about it; both are refused here, before a
parser sees a byte: the declared sizes are bounded (`MAX_UNPACKED`, `MAX_MEMBERS`, `MAX_RATIO`),
and every member is then unpacked once, in chunks, up to its declared size, with Python's zip
reader checking each member's CRC: a member whose data does not end where it says fails here,
so no library later unpacks more than was declared. Archives inside the archive (embedded
objects) are never opened, so nesting costs nothing.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from localqa.formats import (
    EMPTY_ZIP,
    OFFICE_MAIN_PART,
    OLE,
    ZIP,
    Format,
    format_of,
    is_encrypted_office,
    office_kind,
    what_bytes_say,
)

MAX_UNPACKED = 512 * 2**20  # bytes, all members together
MAX_MEMBERS = 20_000
MAX_RATIO = 1_000  # uncompressed / compressed, for a member larger than RATIO_FROM
RATIO_FROM = 16 * 2**20
_CHUNK = 2**20
MAX_PIXELS = 100 * 10**6  # per image (a 300 dpi A3 scan is 17.4 million)
ZIPPED = frozenset({"docx", "xlsx", "pptx", "epub", "cbz"})  # XPS too, checked by its suffix
_TEXT_FORMATS = frozenset({"markdown", "text", "csv", "html"})


class BadFile(Exception):
    """The file is not what its name says, or is unsafe to open; the message says why and the fix."""


def check_file(path: Path, name: str) -> Format:
    """The file's format, once its content agrees with its extension (and, for a zip-based
    format, once the archive is safe to unpack). Raises `BadFile` naming what is wrong."""
    fmt = format_of(name)
    if fmt is None:
        raise BadFile("is not a format localqa reads")
    size = path.stat().st_size
    if size == 0:
        raise BadFile(f"empty file (0 bytes); replace it with the real {fmt.noun} or remove it")
    with path.open("rb") as handle:
        head = handle.read(1024)
    found = what_bytes_say(head)
    zipped = fmt.name in ZIPPED or path.suffix.lower() in {".xps", ".oxps"}
    if zipped:
        _check_zipped(path, name, fmt, head, found)
    elif fmt.name in _TEXT_FORMATS:
        if found is not None:
            raise BadFile(f"is {found} by its content, not {fmt.label}; rename it with the right extension")
        if b"\0" in head and not head.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16 text has NULs
            raise BadFile(f"is binary data, not {fmt.label}; remove it or rename it with the right extension")
    elif fmt.family == "image":  # a PDF is checked as it is opened (`pdf.open_pdf`)
        if found is None:
            raise BadFile(f"is not {fmt.label} (its content is no image format); check the file or remove it")
        if found != fmt.label:
            raise BadFile(f"is {found} by its content, not {fmt.label}; rename it with the right extension")
        _check_pixels(path)
    return fmt


def _check_pixels(path: Path) -> None:
    """An image's size, read from its header (nothing is decoded): a small file can declare an
    image that takes gigabytes to decode, and PyMuPDF would decode it to render or OCR it."""
    import warnings

    from PIL import Image

    too_large = (
        f"declares an image of more than {MAX_PIXELS // 10**6} megapixels; refused as a decompression "
        "bomb: scale it down"
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(path)
    except Image.DecompressionBombError:
        raise BadFile(too_large) from None
    except Exception as error:  # Pillow raises many types for damaged images
        raise BadFile(f"is a damaged image ({error}); re-export it") from None
    try:
        with image:
            for frame in range(getattr(image, "n_frames", 1)):
                image.seek(frame)
                width, height = image.size
                if width * height > MAX_PIXELS:
                    raise BadFile(
                        f"declares an image of {width} x {height} pixels (more than {MAX_PIXELS // 10**6} "
                        "megapixels); refused as a decompression bomb: scale it down"
                    )
    except BadFile:
        raise
    except Exception as error:  # Pillow raises many types for damaged images
        raise BadFile(f"is a damaged image ({error}); re-export it") from None


def _check_zipped(path: Path, name: str, fmt: Format, head: bytes, found: str | None) -> None:
    if head.startswith(OLE) and fmt.name in OFFICE_MAIN_PART:
        if is_encrypted_office(path):
            raise BadFile(
                "is password-protected (encrypted); open it, save it without a password, and run again"
            )
        raise BadFile(
            "is an Office 97-2003 file (.doc/.xls/.ppt) with a new extension; save it as "
            f"{fmt.label} from its application and run again"
        )
    if not head.startswith((ZIP, EMPTY_ZIP)):
        if found is None:
            raise BadFile(
                f"is not {fmt.label} (its content is not a zip archive); check the file or remove it"
            )
        raise BadFile(f"is {found} by its content, not {fmt.label}; rename it with the right extension")
    members = check_archive(path)
    wanted = OFFICE_MAIN_PART.get(fmt.name)
    if wanted is not None and wanted not in members:
        other = office_kind(members)
        what = f"is {other}" if other else "is a zip archive"
        raise BadFile(f"{what} by its content, not {fmt.label}; rename it with the right extension")


def check_archive(path: Path) -> set[str]:
    """The member names of a zip archive that is safe to unpack; `BadFile` otherwise."""
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            if len(infos) > MAX_MEMBERS:
                raise BadFile(
                    f"is a zip archive of {len(infos)} members (more than {MAX_MEMBERS}); refused as a zip "
                    "bomb: check where it came from"
                )
            declared = sum(info.file_size for info in infos)
            if declared > MAX_UNPACKED:
                raise BadFile(
                    f"unpacks to {declared / 2**20:,.0f} MiB (more than {MAX_UNPACKED // 2**20} MiB); "
                    "refused as a zip bomb: check where it came from"
                )
            for info in infos:
                packed = max(info.compress_size, 1)
                if info.file_size > RATIO_FROM and info.file_size / packed > MAX_RATIO:
                    raise BadFile(
                        f"member {info.filename} unpacks {info.file_size // packed:,} times its packed size; "
                        "refused as a zip bomb: check where it came from"
                    )
            for info in infos:
                if info.flag_bits & 0x1:
                    raise BadFile("is an encrypted zip archive; save an unencrypted copy and run again")
                # Unpacked up to its declared size, never beyond; a CRC error is raised at its end.
                with archive.open(info) as member:
                    while member.read(_CHUNK):
                        pass
            return {info.filename for info in infos}
    except BadFile:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError, NotImplementedError) as error:
        raise BadFile(f"is a damaged zip archive ({error}); re-export or re-download it") from None
    except OSError as error:
        raise BadFile(f"is a damaged zip archive ({error}); re-export or re-download it") from None
