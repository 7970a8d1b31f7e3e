"""One named section of ELF files: objects, shared libraries, and the members of `ar` archives.
Enough of the format to find a section by name; anything else reads as no section."""

from __future__ import annotations

import struct
from pathlib import Path

_AR_MAGIC = b"!<arch>\n"
_AR_HEADER = 60


def section(path: Path, name: str) -> list[bytes]:
    """The contents of section `name` in the file, one entry per ELF file that has it."""
    data = path.read_bytes()
    members = _ar_members(data) if data.startswith(_AR_MAGIC) else [data]
    found = (_elf_section(m, name.encode()) for m in members)
    return [s for s in found if s is not None]


def _ar_members(data: bytes) -> list[bytes]:
    members, at = [], len(_AR_MAGIC)
    while at + _AR_HEADER <= len(data):
        size_field = data[at + 48:at + 58].strip()
        if not size_field.isdigit():
            break
        size = int(size_field)
        start = at + _AR_HEADER
        members.append(data[start:start + size])
        at = start + size + size % 2
    return members


def _elf_section(data: bytes, name: bytes) -> bytes | None:
    if len(data) < 64 or not data.startswith(b"\x7fELF") or data[4] not in (1, 2):
        return None
    wide = data[4] == 2
    end = "<" if data[5] == 1 else ">"
    try:
        if wide:
            shoff, = struct.unpack_from(f"{end}Q", data, 0x28)
            shentsize, shnum, shstrndx = struct.unpack_from(f"{end}HHH", data, 0x3A)
            header = f"{end}IIQQQQ"
        else:
            shoff, = struct.unpack_from(f"{end}I", data, 0x20)
            shentsize, shnum, shstrndx = struct.unpack_from(f"{end}HHH", data, 0x2E)
            header = f"{end}IIIIII"
        headers = [struct.unpack_from(header, data, shoff + k * shentsize)
                   for k in range(shnum)]
        _, _, _, _, str_off, str_size = headers[shstrndx]
        names = data[str_off:str_off + str_size]
        for sh_name, _, _, _, offset, size in headers:
            if names[sh_name:names.index(b"\0", sh_name)] == name:
                return data[offset:offset + size]
    except (struct.error, IndexError, ValueError):
        return None
    return None
