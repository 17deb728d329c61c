"""The system libraries Qt's X11 platform plugin (xcb) needs, checked before Qt loads it.

Qt aborts the process (exit 134, "Could not load the Qt platform plugin xcb") when one
of them is missing, e.g. libxcb-cursor0 on a fresh Debian or Ubuntu. `xcb_problem()`
finds them first: it reads the plugin's ELF file (``PySide6/Qt/plugins/platforms/
libqxcb.so``), follows the libraries it needs that Qt (or the installer's bundle) ships
itself (libQt6XcbQpa, libQt6Gui, ...), and tries each system library the way the
dynamic loader will (`ctypes.CDLL`: LD_LIBRARY_PATH, the ld.so cache, the default
directories). Where the plugin file cannot be read, `KNOWN_NEEDS` (what PySide6 6.11's
plugin needs) is checked instead. The answer names every missing library, its Debian
package and the `apt-get install` line; desktop/app.py prints it and exits
EXIT_MISSING_LIBRARIES (2). The check applies on Linux when QT_QPA_PLATFORM is xcb, or
unset with a DISPLAY (the X platform is what Qt picks then).

``python -m desktop.xcb_libs`` prints the apt-get line for every system library the
plugin needs (what the README's install line names).
"""
from __future__ import annotations

import ctypes
import importlib.util
import os
import re
import struct
import sys
from pathlib import Path
from typing import Callable, Iterable

DT_NEEDED, DT_RPATH, DT_RUNPATH = 1, 15, 29
SHT_DYNAMIC = 6
# what libqxcb.so and the Qt libraries it loads need from the system (PySide6 6.11, x86-64)
KNOWN_NEEDS = (
    "libxkbcommon.so.0", "libxkbcommon-x11.so.0", "libxcb-cursor.so.0", "libxcb-icccm.so.4",
    "libxcb-util.so.1", "libxcb-image.so.0", "libxcb-keysyms.so.1", "libxcb-randr.so.0",
    "libxcb-render-util.so.0", "libxcb-shm.so.0", "libxcb-sync.so.1", "libxcb-xfixes.so.0",
    "libxcb-render.so.0", "libxcb-shape.so.0", "libxcb-xkb.so.1", "libxcb.so.1", "libX11-xcb.so.1",
    "libX11.so.6", "libGL.so.1", "libEGL.so.1", "libfontconfig.so.1", "libfreetype.so.6",
    "libglib-2.0.so.0", "libgthread-2.0.so.0", "libdbus-1.so.3",
)
# Debian packages whose name does not follow from the library's (see `package_of`)
PACKAGES = {
    "libglib-2.0.so.0": "libglib2.0-0", "libgthread-2.0.so.0": "libglib2.0-0",
    "libgobject-2.0.so.0": "libglib2.0-0", "libgio-2.0.so.0": "libglib2.0-0",
    "libgcc_s.so.1": "libgcc-s1", "libc.so.6": "libc6", "libm.so.6": "libc6", "libdl.so.2": "libc6",
    "libpthread.so.0": "libc6", "librt.so.1": "libc6", "libz.so.1": "zlib1g", "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1", "libOpenGL.so.0": "libopengl0", "libGLX.so.0": "libglx0",
}
# always there where Python runs: never worth naming in an install line
BASE_PACKAGES = ("libc6", "libstdc++6", "libgcc-s1", "zlib1g")


def package_of(soname: str) -> str:
    """The Debian package that holds `soname`: the library's name and its soversion,
    lower case, with a dash between them when the name ends in a digit (libxcb-cursor.so.0
    -> libxcb-cursor0, libxkbcommon-x11.so.0 -> libxkbcommon-x11-0, libX11.so.6 -> libx11-6)."""
    if soname in PACKAGES:
        return PACKAGES[soname]
    if soname.startswith("ld-linux"):
        return "libc6"                       # the dynamic loader itself
    match = re.fullmatch(r"(lib.+?)\.so\.(\d+)(?:\..*)?", soname)
    if not match:
        return soname
    name, version = match.group(1).lower(), match.group(2)
    return f"{name}-{version}" if name[-1].isdigit() else f"{name}{version}"


def elf_dynamic(path: str | os.PathLike) -> tuple[list[str], list[str]]:
    """The NEEDED entries of an ELF shared object and its RUNPATH (or RPATH) directories
    (`$ORIGIN` expanded). Raises OSError/ValueError for a file that is not one."""
    path = Path(path)
    with open(path, "rb") as f:
        ident = f.read(16)
        if ident[:4] != b"\x7fELF" or ident[4] not in (1, 2) or ident[5] not in (1, 2):
            raise ValueError(f"{path}: not an ELF file")
        wide, end = ident[4] == 2, "<" if ident[5] == 1 else ">"
        f.seek(0x28 if wide else 0x20)
        shoff = struct.unpack(end + ("Q" if wide else "I"), f.read(8 if wide else 4))[0]
        f.seek(0x3A if wide else 0x2E)
        shentsize, shnum = struct.unpack(end + "HH", f.read(4))
        header = end + ("IIQQQQIIQQ" if wide else "IIIIIIIIII")

        def section(index: int) -> tuple:
            f.seek(shoff + index * shentsize)
            return struct.unpack(header, f.read(struct.calcsize(header)))

        sections = [section(i) for i in range(shnum)]
        dynamic = next((s for s in sections if s[1] == SHT_DYNAMIC), None)
        if dynamic is None:
            return [], []
        strtab = sections[dynamic[6]]
        f.seek(strtab[4])
        strings = f.read(strtab[5])
        f.seek(dynamic[4])
        raw = f.read(dynamic[5])
    entry = end + ("qQ" if wide else "iI")
    size = struct.calcsize(entry)
    needed, runpath, rpath = [], [], []

    def text(offset: int) -> str:
        return strings[offset:strings.index(b"\0", offset)].decode("utf-8", "replace")
    for i in range(0, len(raw) - size + 1, size):
        tag, value = struct.unpack_from(entry, raw, i)
        if tag == 0:
            break
        if tag == DT_NEEDED:
            needed.append(text(value))
        elif tag in (DT_RUNPATH, DT_RPATH):
            dirs = [d.replace("$ORIGIN", str(path.parent)).replace("${ORIGIN}", str(path.parent))
                    for d in text(value).split(":") if d]
            (runpath if tag == DT_RUNPATH else rpath).extend(dirs)
    return needed, runpath or rpath


def qt_dir() -> Path | None:
    """PySide6's Qt directory (plugins/, lib/), found without importing Qt."""
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]) / "Qt"


def system_needs(roots: Iterable[Path], shipped_dirs: Iterable[Path] = ()) -> list[str]:
    """What the ELF files `roots` need from the system: every NEEDED library, followed into
    the ones Qt or the bundle ships (found in their RUNPATH or `shipped_dirs`), in order."""
    shipped_dirs = [Path(d) for d in shipped_dirs]
    todo, seen, needs = [Path(r) for r in roots], set(), []
    while todo:
        current = todo.pop(0)
        if current in seen:
            continue
        seen.add(current)
        needed, runpath = elf_dynamic(current)
        for name in needed:
            local = next((Path(d) / name for d in [*runpath, *shipped_dirs] if (Path(d) / name).is_file()), None)
            if local is not None:
                todo.append(local.resolve())
            elif name not in needs:
                needs.append(name)
    return needs


def xcb_plugin_needs(qt: Path | None = None) -> list[str]:
    """The system libraries Qt's xcb platform plugin (and QtWidgets) need; KNOWN_NEEDS
    when the plugin cannot be read."""
    qt = qt if qt is not None else qt_dir()
    plugin = qt / "plugins" / "platforms" / "libqxcb.so" if qt is not None else None
    if plugin is None or not plugin.is_file():
        return list(KNOWN_NEEDS)
    roots = [plugin] + [p for p in (qt / "lib" / "libQt6Widgets.so.6",) if p.is_file()]
    shipped = [qt / "lib"] + ([Path(sys._MEIPASS)] if getattr(sys, "_MEIPASS", None) else [])
    try:
        return system_needs(roots, shipped)
    except (OSError, ValueError, struct.error, IndexError):
        return list(KNOWN_NEEDS)


def loadable(soname: str) -> bool:
    """Would the dynamic loader find `soname` (and what it needs)? It is loaded to tell."""
    try:
        ctypes.CDLL(soname)
        return True
    except OSError:
        return False


def missing_libraries(names: Iterable[str], search_dirs: Iterable[str | os.PathLike] = (),
                      load: Callable[[str], bool] = loadable) -> list[str]:
    """Those of `names` that are neither a file in `search_dirs` nor loadable by `load`."""
    dirs = [Path(d) for d in search_dirs]
    return [name for name in names
            if not any((d / name).is_file() for d in dirs) and not load(name)]


def install_command(sonames: Iterable[str]) -> str:
    packages = []
    for soname in sonames:
        package = package_of(soname)
        if package not in packages:
            packages.append(package)
    return "sudo apt-get install " + " ".join(packages)


def applies(env=None, platform: str = sys.platform) -> bool:
    """Will Qt load the xcb plugin? On Linux, with QT_QPA_PLATFORM xcb, or unset with a
    DISPLAY (and not a Wayland session whose plugin Qt has)."""
    env = os.environ if env is None else env
    if not platform.startswith("linux"):
        return False
    qpa = env.get("QT_QPA_PLATFORM", "").split(";")[0].split(":")[0].strip()
    if qpa == "xcb":
        return True
    if qpa or not env.get("DISPLAY"):
        return False
    if env.get("XDG_SESSION_TYPE") == "wayland" and env.get("WAYLAND_DISPLAY"):
        qt = qt_dir()
        if qt is not None and any((qt / "plugins" / "platforms").glob("libqwayland*.so")):
            return False          # Qt takes its Wayland plugin in a Wayland session
    return True


def xcb_problem(env=None, platform: str = sys.platform, *, needs: Iterable[str] | None = None,
                search_dirs: Iterable[str | os.PathLike] = (), load: Callable[[str], bool] = loadable) -> str | None:
    """What is missing for Qt's xcb plugin, with the command that installs it, or None."""
    if not applies(env, platform):
        return None
    missing = missing_libraries(xcb_plugin_needs() if needs is None else needs, search_dirs, load)
    if not missing:
        return None
    named = ", ".join(f"{name} (package {package_of(name)})" for name in missing)
    return (f"Qt's X11 platform (xcb) cannot start: these system libraries are missing: {named}. "
            f"Install them with:\n    {install_command(missing)}")


def main() -> int:
    needs = xcb_plugin_needs()
    packages = [package_of(n) for n in needs]
    print("sudo apt-get install " + " ".join(dict.fromkeys(p for p in packages if p not in BASE_PACKAGES)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
