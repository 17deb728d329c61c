"""Issue 26 item 19: before Qt loads its X11 platform plugin the terminal checks the
system libraries that plugin needs (read from the plugin's ELF file), and a missing one
is named with its package and the apt-get line, exit 2, instead of Qt's abort (exit
134). The README's install line names every one of them. Needs no display, no server."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from desktop import app, xcb_libs

ROOT = Path(__file__).resolve().parents[2]


def test_the_plugins_needs_are_read_from_its_elf_file():
    needs = xcb_libs.xcb_plugin_needs()
    for soname in ("libxcb-cursor.so.0", "libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libxkbcommon-x11.so.0",
                   "libxcb.so.1", "libEGL.so.1", "libfontconfig.so.1"):       # the last two: libQt6Gui's
        assert soname in needs, soname
    assert not [n for n in needs if n.startswith("libQt6")]          # Qt's own libraries: followed, not needed
    assert xcb_libs.missing_libraries(needs) == []                   # this machine runs the xcb tests
    needed, runpath = xcb_libs.elf_dynamic(xcb_libs.qt_dir() / "plugins" / "platforms" / "libqxcb.so")
    assert "libQt6XcbQpa.so.6" in needed and any(Path(d).resolve() == (xcb_libs.qt_dir() / "lib").resolve()
                                                 for d in runpath)
    with pytest.raises(ValueError):
        xcb_libs.elf_dynamic(ROOT / "README.md")


def test_a_missing_library_is_found_in_a_library_path_or_named(tmp_path):
    names = ["libxcb-cursor.so.0", "libcashier-test-absent.so.3"]
    assert xcb_libs.missing_libraries(names) == ["libcashier-test-absent.so.3"]
    (tmp_path / "libcashier-test-absent.so.3").write_bytes(b"")      # a library directory that has it
    assert xcb_libs.missing_libraries(names, search_dirs=[tmp_path]) == []
    nothing_loads = lambda _name: False                               # noqa: E731  (a bare system)
    assert xcb_libs.missing_libraries(names, load=nothing_loads) == names


@pytest.mark.parametrize("soname, package", [
    ("libxcb-cursor.so.0", "libxcb-cursor0"), ("libxcb-icccm.so.4", "libxcb-icccm4"),
    ("libxcb-keysyms.so.1", "libxcb-keysyms1"), ("libxkbcommon-x11.so.0", "libxkbcommon-x11-0"),
    ("libxcb-render-util.so.0", "libxcb-render-util0"), ("libX11-xcb.so.1", "libx11-xcb1"),
    ("libX11.so.6", "libx11-6"), ("libGL.so.1", "libgl1"), ("libEGL.so.1", "libegl1"),
    ("libglib-2.0.so.0", "libglib2.0-0"), ("libdbus-1.so.3", "libdbus-1-3"), ("libfreetype.so.6", "libfreetype6"),
])
def test_each_library_names_its_debian_package(soname, package):
    assert xcb_libs.package_of(soname) == package


@pytest.mark.parametrize("env, checked", [
    ({"DISPLAY": ":0"}, True),
    ({"DISPLAY": ":0", "QT_QPA_PLATFORM": "xcb"}, True),
    ({"QT_QPA_PLATFORM": "xcb"}, True),
    ({}, False),                                               # no DISPLAY: the display check says it
    ({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"}, False),
    ({"DISPLAY": ":0", "QT_QPA_PLATFORM": "wayland"}, False),
])
def test_the_check_applies_where_qt_loads_the_x11_plugin(env, checked):
    assert xcb_libs.applies(env, "linux") is checked
    assert not xcb_libs.applies(env, "win32")
    problem = xcb_libs.xcb_problem(env, "linux", needs=["libcashier-test-absent.so.3"])
    assert (problem is not None) is checked


def test_the_terminal_names_what_is_missing_and_exits_2(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("DISPLAY", ":1999")                     # the libraries come before the display
    for name in ("QT_QPA_PLATFORM", "XDG_SESSION_TYPE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(xcb_libs, "xcb_plugin_needs",
                        lambda qt=None: ["libxcb-cursor.so.0", "libxcb-cursor-test.so.0", "libxkbcommon-x11-test.so.0"])
    code = app.main(["--data-dir", str(tmp_path), "--config", str(tmp_path / "t.ini")])
    assert code == app.EXIT_MISSING_LIBRARIES == 2
    err = capsys.readouterr().err
    assert "libxcb-cursor-test.so.0 (package libxcb-cursor-test0)" in err
    assert "libxkbcommon-x11-test.so.0 (package libxkbcommon-x11-test0)" in err
    assert "libxcb-cursor.so.0 " not in err                     # present here: not named
    assert "sudo apt-get install libxcb-cursor-test0 libxkbcommon-x11-test0" in err
    assert "Nothing was started" in err
    assert not (tmp_path / "logs").exists()                      # stopped before anything started


def test_the_readme_install_line_names_every_library_the_plugin_needs():
    packages = {xcb_libs.package_of(n) for n in xcb_libs.xcb_plugin_needs()} - set(xcb_libs.BASE_PACKAGES)
    lines = [ln for ln in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
             if ln.startswith("sudo apt-get install ") and "libxcb-cursor0" in ln]
    assert lines, "README: no apt-get line for the till's libraries"
    named = set(re.split(r"\s+", lines[0].split("#")[0].strip())[3:])
    assert packages <= named, sorted(packages - named)
