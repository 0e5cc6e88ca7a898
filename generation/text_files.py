"""Text files a user names (sentences, pairs) are UTF-8; one that is not is refused with
the file, the line and how to fix it, not a codec's byte position."""

from pathlib import Path


class NotUtf8(ValueError):
    """The file is not UTF-8 text; the message names the file and the first bad line."""


def read_utf8_lines(path: Path) -> list[str]:
    """The lines of a UTF-8 text file."""
    return _decoded(path, path.read_bytes()).splitlines()


def check_utf8(path: Path) -> None:
    """Raise NotUtf8 unless the whole file decodes as UTF-8."""
    _decoded(path, path.read_bytes())


def _decoded(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise NotUtf8(
            f"{path}:{line}: not UTF-8 text (byte 0x{data[error.start]:02x}); "
            "save the file as UTF-8."
        ) from None
