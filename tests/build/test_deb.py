"""The Debian package, built from the session's PyInstaller bundle by
packaging/build_deb.py, installed with dpkg into a clean Debian root (debootstrap
minbase plus only the package's Depends, run through chroot), then used and removed:

- the package's metadata: files under /opt/cashier, /usr/bin links, desktop entry (en,
  zh_CN) and icon, the systemd units (reconcile, gateway), the conffile, maintainer
  scripts, computed Depends;
- `dpkg -i` in the clean root succeeds (Depends are complete), postinst made the system
  users (the service's, the gateway's), /var/lib/cashier (0750, the service user's) and
  the 0600 secrets files (reconcile.env, gateway.env); neither unit is enabled;
- every program's smoke mode from the installed paths (/usr/bin links), the terminal on
  Qt's offscreen platform, the gateway's self-test as its own user; the reconcile service
  as its own user with the packaged config writes its books into /var/lib/cashier (a
  real Redis on the host);
- `systemd-analyze verify` of both units inside the root (its own systemd);
- `dpkg -r` keeps the books, the edited conffile, the secrets files and the users;
  `dpkg -P` deletes them;
  every directory that existed before the install (/opt above all, which no package owns
  and dpkg would delete when empty) is still there after each;
- text renders on a real X display: an Xvfb of the host (its framebuffer in a file, read
  here) reaches the root through a bind-mounted /tmp/.X11-unix; the menu entry's command
  runs as a normal user in en and in zh_CN, and each screenshot differs from the one taken
  with fontconfig knowing no font (en) or only DejaVu (zh_CN), i.e. from the empty
  boxes; the self-test names the fonts Qt resolved; zh_CN without a CJK font says so;
  the main window fills the screen (no window manager);
- the sizes the README and docs/deployment.md quote (bundle, .deb, installed, the
  biggest optional pieces) are measured, printed, written to $CASHIER_DEB_SIZES (JSON)
  if set, and the README's must be within 10% of them.

The clean root (minbase + Depends + the first of each Recommends alternative + systemd,
which every till has and the unit check needs) is cached as a tarball (debootstrap takes about a minute) under
$CASHIER_DEB_ROOT_CACHE (default /var/cache/cashier-ci), keyed by suite and Depends, so
CI reuses it. Needs root (chroot), debootstrap and dpkg-deb: skipped, saying which is
missing, elsewhere; .ci/run installs them.
"""
from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import json
import os
import re
import struct
import time
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.support.servers import RedisServer, redis_server_available

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "packaging"))
import build_deb  # noqa: E402  (packaging/ is not a package: its name would shadow PyPI's `packaging`)

RUN_TIMEOUT_S = 300
CACHE_DIR = Path(os.environ.get("CASHIER_DEB_ROOT_CACHE", "/var/cache/cashier-ci"))
MIRROR = os.environ.get("CASHIER_DEB_MIRROR", "http://deb.debian.org/debian")
USER = "cashier-reconcile"
GATEWAY_USER = "cashier-gateway"


def _missing() -> str | None:
    if importlib.util.find_spec("PyInstaller") is None:
        return "PyInstaller is not installed (pip install -e '.[build]')"
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "installing into a clean root needs root (chroot)"
    for tool in ("dpkg-deb", "debootstrap", "readelf", "Xvfb"):
        if shutil.which(tool) is None:
            return f"{tool} is missing (apt install dpkg-dev debootstrap binutils xvfb; .ci/run does)"
    return None


pytestmark = [pytest.mark.build, pytest.mark.timeout(1500), pytest.mark.skipif(_missing() is not None, reason=str(_missing()))]


def suite() -> str:
    for line in Path("/etc/os-release").read_text().splitlines():
        if line.startswith("VERSION_CODENAME="):
            return line.split("=", 1)[1].strip('"')
    return "bookworm"


def sh(*args: str, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(list(args), capture_output=True, text=True, timeout=RUN_TIMEOUT_S, **kwargs)
    if check:
        assert result.returncode == 0, (args, result.stdout[-3000:], result.stderr[-3000:])
    return result


@pytest.fixture(scope="module")
def deb(bundle, tmp_path_factory) -> Path:
    return build_deb.build(bundle, tmp_path_factory.mktemp("deb"), compression="gzip")


def depends_packages(deb_path: Path, field: str = "Depends") -> list[str]:
    """The packages of a relation field (the first of each alternative)."""
    text = sh("dpkg-deb", "-f", str(deb_path), field).stdout
    return sorted(part.split("|")[0].split()[0] for part in text.split(",") if part.strip())


def root_tarball(packages: list[str]) -> Path:
    """minbase + the package's Depends, made once and kept (a file lock for parallel runs)."""
    key = hashlib.sha256(" ".join([suite(), MIRROR, "systemd", *packages]).encode()).hexdigest()[:12]
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    tarball = CACHE_DIR / f"debootstrap-{suite()}-minbase-{key}.tar"
    with open(CACHE_DIR / "debootstrap.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not tarball.exists():
            work = CACHE_DIR / f"work-{key}"
            shutil.rmtree(work, ignore_errors=True)
            # + systemd: every till has it, and `systemd-analyze verify --root` needs its
            # targets in the root (minbase has no init); it brings none of our Depends
            extra = [p for p in packages if p != "libc6"] + ["systemd"]
            sh("debootstrap", "--variant=minbase", f"--include={','.join(extra)}", suite(), str(work), MIRROR)
            shutil.rmtree(work / "var/cache/apt/archives", ignore_errors=True)
            (work / "var/cache/apt/archives/partial").mkdir(parents=True)
            partial = tarball.with_suffix(".partial")
            sh("tar", "-C", str(work), "--numeric-owner", "-cf", str(partial), ".")
            partial.rename(tarball)
            shutil.rmtree(work)
    return tarball


class Chroot:
    """A fresh copy of the cached root, with /proc mounted, to run commands in."""

    def __init__(self, path: Path):
        self.path = path

    def run(self, *args: str, user: str | None = None, env: dict | None = None,
            check: bool = True) -> subprocess.CompletedProcess:
        base = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8",
                "HOME": "/root"}
        spec = [f"--userspec={user}:{user}"] if user else []
        return sh("chroot", *spec, str(self.path), *args, env={**base, **(env or {})}, check=check)

    def exists(self, path: str) -> bool:
        return os.path.lexists(self.path / path.lstrip("/"))


@pytest.fixture(scope="module")
def clean_root(deb, tmp_path_factory):
    tarball = root_tarball(depends_packages(deb) + depends_packages(deb, "Recommends"))
    path = tmp_path_factory.mktemp("root") / "root"
    path.mkdir()
    sh("tar", "-C", str(path), "--numeric-owner", "-xf", str(tarball))
    shutil.copyfile("/etc/resolv.conf", path / "etc/resolv.conf") if Path("/etc/resolv.conf").exists() else None
    sh("mount", "-t", "proc", "proc", str(path / "proc"))
    try:
        yield Chroot(path)
    finally:
        subprocess.run(["umount", "-l", str(path / "proc")], capture_output=True)
        # never delete through a mount that is still there (the host's X sockets, /proc)
        if not any(f" {path}/" in line for line in Path("/proc/mounts").read_text().splitlines()):
            shutil.rmtree(path, ignore_errors=True)

# ---------------------------------------------------------------- a real X display

TILL_USER = "till"          # a shop's normal login on the till
NO_FONTS_CONF = '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>{dirs}</fontconfig>\n'
SCREEN_W, SCREEN_H = 1024, 768


class XDisplay:
    """Xvfb on the host whose screen is a file (-fbdir: XWD format), so a screenshot is a read."""

    def __init__(self, number: int, fbdir: Path, proc: subprocess.Popen):
        self.name, self.fbdir, self.proc = f":{number}", fbdir, proc

    def grab(self) -> bytes:
        """A screenshot: the screen's XWD file as it is now."""
        return (self.fbdir / "Xvfb_screen0").read_bytes()

    @staticmethod
    def pixels(data: bytes) -> list[bytes]:
        """The screenshot as one bytes object per row (4 bytes a pixel)."""
        fields = struct.unpack(">25I", data[:100])
        header_size, width, height, bytes_per_line, ncolors = fields[0], fields[4], fields[5], fields[12], fields[19]
        start = header_size + 12 * ncolors
        return [data[start + y * bytes_per_line: start + y * bytes_per_line + 4 * width] for y in range(height)]


def differing_pixels(a: list[bytes], b: list[bytes]) -> int:
    count = 0
    for row_a, row_b in zip(a, b):
        if row_a != row_b:
            count += sum(1 for x in range(0, len(row_a), 4) if row_a[x:x + 4] != row_b[x:x + 4])
    return count


def free_display() -> int:
    for number in range(120, 250):
        if not Path(f"/tmp/.X{number}-lock").exists() and not Path(f"/tmp/.X11-unix/X{number}").exists():
            return number
    raise RuntimeError("no free X display number")


@pytest.fixture
def x_display(clean_root, tmp_path):
    """The host's Xvfb (black root, no window manager), its socket bind-mounted into the root."""
    number, fbdir = free_display(), tmp_path / "fb"
    fbdir.mkdir()
    proc = subprocess.Popen(["Xvfb", f":{number}", "-screen", "0", f"{SCREEN_W}x{SCREEN_H}x24", "-br",
                             "-nolisten", "tcp", "-fbdir", str(fbdir)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sockets = clean_root.path / "tmp/.X11-unix"
    try:
        deadline = time.monotonic() + 15
        while not Path(f"/tmp/.X11-unix/X{number}").exists() or not (fbdir / "Xvfb_screen0").exists():
            assert proc.poll() is None and time.monotonic() < deadline, "Xvfb did not start"
            time.sleep(0.05)
        sockets.mkdir(parents=True, exist_ok=True)
        sh("mount", "--bind", "/tmp/.X11-unix", str(sockets))
        yield XDisplay(number, fbdir, proc)
    finally:
        subprocess.run(["umount", str(sockets)], capture_output=True)
        proc.terminate()
        proc.wait(10)


def screenshot(root: "Chroot", display: XDisplay, argv: list[str], env: dict, name: str,
               shots: Path) -> tuple[list[bytes], str]:
    """Start `argv` in the root as the till's user on `display`, wait until the screen is drawn
    and settles (a blinking text cursor aside), keep the screenshot; (rows, stderr)."""
    full_env = {"PATH": "/usr/bin:/bin", "HOME": f"/home/{TILL_USER}", "DISPLAY": display.name,
                "LANG": "C.UTF-8", **env}
    log = shots / f"{name}.stderr"
    with open(log, "w") as err:
        proc = subprocess.Popen([shutil.which("chroot") or "/usr/sbin/chroot", f"--userspec={TILL_USER}:{TILL_USER}", str(root.path), *argv],
                                env=full_env, stdout=err, stderr=err)
        try:
            deadline, previous, rows, shot = time.monotonic() + 90, None, None, b""
            while True:
                assert proc.poll() is None, f"{name}: {argv} exited {proc.returncode}: {log.read_text()[-3000:]}"
                assert time.monotonic() < deadline, f"{name}: the screen never settled: {log.read_text()[-3000:]}"
                time.sleep(0.6)
                shot = display.grab()
                rows = display.pixels(shot)
                drawn = len(set(rows)) > 1
                if drawn and previous is not None and differing_pixels(previous, rows) < 100:
                    break
                previous = rows
        finally:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
    (shots / f"{name}.xwd").write_bytes(shot)     # `convert name.xwd name.png` to look at it
    time.sleep(0.5)            # let the X server drop the closed windows before the next start
    return rows, log.read_text()


def check_text_renders(root: "Chroot", display: XDisplay, shots: Path) -> dict:
    """en and zh_CN on the real display, each against its empty-box twin (see the docstring)."""
    root.run("useradd", "--create-home", "--shell", "/bin/sh", TILL_USER)
    (root.path / "tmp/no-fonts.conf").write_text(NO_FONTS_CONF.format(dirs=""))
    (root.path / "tmp/latin-only.conf").write_text(
        NO_FONTS_CONF.format(dirs="<dir>/usr/share/fonts/truetype/dejavu</dir>"))
    menu_command = [line.split("=", 1)[1] for line in
                    (root.path / "usr/share/applications/cashier-terminal.desktop").read_text().splitlines()
                    if line.startswith("Exec=")][0].split()
    zh = {"LANG": "zh_CN.UTF-8"}
    en_text, _ = screenshot(root, display, menu_command, {}, "en", shots)
    en_boxes, _ = screenshot(root, display, menu_command, {"FONTCONFIG_FILE": "/tmp/no-fonts.conf"},
                             "en-no-fonts", shots)
    zh_text, zh_said = screenshot(root, display, menu_command, zh, "zh_CN", shots)
    zh_boxes, zh_boxes_said = screenshot(root, display, menu_command,
                                         {**zh, "FONTCONFIG_FILE": "/tmp/latin-only.conf"}, "zh_CN-latin-only", shots)
    measured = {"en_vs_no_fonts": differing_pixels(en_text, en_boxes),
                "zh_vs_latin_only": differing_pixels(zh_text, zh_boxes),
                "en_vs_zh": differing_pixels(en_text, zh_text)}
    # glyphs differ from empty boxes in thousands of pixels; a blinking cursor is ~40
    assert measured["en_vs_no_fonts"] > 2000 and measured["zh_vs_latin_only"] > 1000, measured
    assert measured["en_vs_zh"] > 1000, measured                       # the dialog is translated
    assert "no font on this till can draw Chinese" in zh_boxes_said, zh_boxes_said[-2000:]
    assert "no font on this till can draw Chinese" not in zh_said, zh_said[-2000:]
    # the main window (configured on the command line), no window manager: it fills the screen
    window, _ = screenshot(root, display, ["/usr/bin/cashier-terminal", "--gateway-url", "http://127.0.0.1:1",
                                           "--terminal-id", "T1"], {"CASHIER_TERMINAL_TOKEN": "T1.none"},
                              "main-window", shots)
    black = bytes(4)
    for y in (0, SCREEN_H // 2, SCREEN_H - 1):
        row = window[y]
        uncovered = sum(1 for x in range(0, len(row), 4) if row[x:x + 3] == black[:3])
        assert uncovered < SCREEN_W // 2, f"row {y}: {uncovered} px of the black root showing"
    return measured


# ---------------------------------------------------------------- sizes

def tree_bytes(path: Path, pattern: str = "*") -> int:
    return sum(f.lstat().st_size for f in path.glob(f"**/{pattern}") if f.is_file() and not f.is_symlink())


def measure_sizes(bundle: Path, deb_path: Path, root: "Chroot") -> dict:
    internal = bundle / "_internal"
    sizes_mb = {
        "bundle": tree_bytes(bundle),
        "deb_gzip": deb_path.stat().st_size,
        "installed": tree_bytes(root.path / "opt/cashier"),
        "installed_size_field": int(sh("dpkg-deb", "-f", str(deb_path), "Installed-Size").stdout) * 1024,
        "pillow": tree_bytes(internal / "PIL") + tree_bytes(internal / "pillow.libs"),
        "fonttools": tree_bytes(internal / "fontTools"),
        "pypinyin": tree_bytes(internal / "pypinyin"),
        "qt_libraries": tree_bytes(internal / "PySide6" / "Qt" / "lib"),
    }
    sizes = {name: round(value / 1e6, 1) for name, value in sizes_mb.items()}
    print("\npackage sizes (MB):", json.dumps(sizes))
    if os.environ.get("CASHIER_DEB_SIZES"):
        Path(os.environ["CASHIER_DEB_SIZES"]).write_text(json.dumps(sizes, indent=2) + "\n")
    return sizes


def check_docs_quote(sizes: dict) -> None:
    """The README's figures are the measured ones (within 10%: builds vary a little)."""
    readme = (ROOT / "README.md").read_text()
    folder = float(re.search(r"\*\*Size of the folder\*\*.*?\*\*([\d.]+) MB\*\*", readme, re.S).group(1))
    installed = float(re.search(r"([\d.]+) MB installed", readme).group(1))
    for quoted, measured, what in ((folder, sizes["bundle"], "bundle"), (installed, sizes["installed"], "installed")):
        assert abs(quoted - measured) <= 0.1 * measured, f"README says {quoted} MB {what}, measured {measured} MB"


def directories(root: "Chroot") -> set[str]:
    found = set()
    for top, dirs, _files in os.walk(root.path):
        rel = "/" + os.path.relpath(top, root.path)
        if rel.startswith(("/proc", "/sys", "/tmp", "/dev")):
            dirs[:] = []
            continue
        found.add(os.path.normpath(rel))
    return found



def test_package_holds_programs_links_menu_entry_unit_and_conffile(deb):
    listing = sh("dpkg-deb", "-c", str(deb)).stdout
    for path in ("./opt/cashier/cashier-terminal", "./opt/cashier/reconcile-service", "./opt/cashier/cashierctl",
                 "./opt/cashier/cashier-gateway", "./lib/systemd/system/cashier-gateway.service",
                 "./usr/share/doc/cashier/gateway.md", "./opt/cashier/_internal/core/lua/deduct.lua",
                 "./usr/share/applications/cashier-terminal.desktop",
                 "./usr/share/icons/hicolor/scalable/apps/cashier-terminal.svg",
                 "./lib/systemd/system/cashier-reconcile.service", "./etc/cashier/reconcile.toml",
                 "./usr/share/doc/cashier/copyright"):
        assert f" {path}" in listing, path
    assert "cashier-gateway" in build_deb.PROGRAMS
    for program in build_deb.PROGRAMS:
        assert f"./usr/bin/{program} -> /opt/cashier/{program}" in listing
    assert all(" root/root " in line for line in listing.splitlines())      # whoever built it
    assert "libgtk" not in listing and "platformthemes" not in listing and "wayland" not in listing.lower()
    info = sh("dpkg-deb", "-I", str(deb)).stdout
    assert "Package: cashier" in info and "conffiles" in info
    for script in ("postinst", "prerm", "postrm"):
        assert script in info
    depends = sh("dpkg-deb", "-f", str(deb), "Depends").stdout
    assert depends.startswith("libc6 (>= 2.")
    # text: fontconfig's configuration and a Latin font; Chinese: a CJK font recommended
    assert {"fontconfig-config", "fonts-dejavu-core"} <= set(depends_packages(deb))
    recommends = sh("dpkg-deb", "-f", str(deb), "Recommends").stdout
    assert "fonts-wqy-microhei" in recommends and "fonts-noto-cjk" in recommends
    assert sh("dpkg-deb", "-f", str(deb), "Version").stdout.strip() == f"{build_deb.version()}-1"
    desktop = (build_deb.DEB_DIR / "cashier-terminal.desktop").read_text()
    assert "Name=Cashier Terminal" in desktop and "Name[zh_CN]=收银终端" in desktop
    if shutil.which("desktop-file-validate"):
        sh("desktop-file-validate", str(build_deb.DEB_DIR / "cashier-terminal.desktop"))


@pytest.mark.skipif(not redis_server_available(), reason="needs a redis-server binary")
def test_install_use_remove_purge_in_a_clean_root(deb, clean_root, x_display, bundle, tmp_path):
    root = clean_root
    assert not root.exists("/opt/cashier") and root.run("getent", "passwd", USER, check=False).returncode == 2
    assert root.run("getent", "passwd", GATEWAY_USER, check=False).returncode == 2
    assert root.exists("/opt") and not any((root.path / "opt").iterdir())     # debootstrap's: empty, no owner
    assert root.run("dpkg", "-S", "/opt", check=False).returncode != 0
    before = directories(root)
    shutil.copyfile(deb, root.path / "tmp/cashier.deb")

    # install: every dependency is in the clean root (minbase + Depends), postinst ran
    installed = root.run("dpkg", "-i", "/tmp/cashier.deb", check=False)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    passwd = root.run("getent", "passwd", USER).stdout.strip().split(":")
    assert passwd[5] == "/var/lib/cashier" and passwd[6] == "/usr/sbin/nologin" and int(passwd[2]) < 1000
    data = os.stat(root.path / "var/lib/cashier")
    assert oct(data.st_mode & 0o777) == "0o750" and data.st_uid == int(passwd[2])
    secrets = os.stat(root.path / "etc/cashier/reconcile.env")
    assert oct(secrets.st_mode & 0o777) == "0o600" and secrets.st_uid == 0
    # the gateway: its own system user (not the service's: it must not read the books),
    # its secrets file, its unit installed and not enabled
    gateway_passwd = root.run("getent", "passwd", GATEWAY_USER).stdout.strip().split(":")
    assert gateway_passwd[6] == "/usr/sbin/nologin" and int(gateway_passwd[2]) < 1000
    assert gateway_passwd[2] != passwd[2]
    gateway_env = root.path / "etc/cashier/gateway.env"
    assert oct(os.stat(gateway_env).st_mode & 0o777) == "0o600" and os.stat(gateway_env).st_uid == 0
    assert "#CASHIER_REDIS_URL=redis://gateway:PASSWORD@" in gateway_env.read_text()
    for unit in ("cashier-gateway.service", "cashier-reconcile.service"):
        enabled = root.run("systemctl", "is-enabled", unit, check=False)
        assert enabled.stdout.strip() == "disabled", (unit, enabled.stdout + enabled.stderr)
        assert not list((root.path / "etc/systemd/system").rglob(unit)), unit

    # each program's smoke mode from the installed commands
    assert root.run("cashierctl", "--version").stdout.startswith("cashierctl ")
    assert "from the bundle at /opt/cashier/_internal" in root.run("/usr/bin/cashierctl", "self-test").stdout
    assert "self-test: OK" in root.run("/usr/bin/reconcile-service", "self-test", user=USER,
                                       env={"HOME": "/var/lib/cashier"}).stdout
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*\n", root.run("cashier-gateway", "--version").stdout)
    gateway_test = root.run("/usr/bin/cashier-gateway", "self-test", user=GATEWAY_USER, env={"HOME": "/"})
    assert "self-test: OK" in gateway_test.stdout and "from the bundle at /opt/cashier/_internal" in gateway_test.stdout
    terminal = root.run("/usr/bin/cashier-terminal", "--self-test", env={"QT_QPA_PLATFORM": "offscreen"})
    assert "self-test: OK" in terminal.stdout and "main window built" in terminal.stdout
    # the fonts Qt resolved: the Latin font of Depends and the CJK one of Recommends
    assert "DejaVu Sans" in terminal.stdout and "WenQuanYi Micro Hei" in terminal.stdout, terminal.stdout
    # fontconfig without its configuration still looks in /usr/share/fonts: the bare
    # till's state (no font anywhere) is a configuration that names no font directory
    (root.path / "tmp/no-fonts.conf").write_text(NO_FONTS_CONF.format(dirs=""))
    no_fonts = root.run("/usr/bin/cashier-terminal", "--self-test", check=False,
                        env={"QT_QPA_PLATFORM": "offscreen", "FONTCONFIG_FILE": "/tmp/no-fonts.conf"})
    assert no_fonts.returncode == 1 and "no font can draw" in no_fonts.stdout, no_fonts.stdout

    # text renders on a real X display, in en and zh_CN (screenshots kept in tmp_path/shots)
    shots = tmp_path / "shots"
    shots.mkdir()
    print("\nscreenshots:", shots, check_text_renders(root, x_display, shots))
    sizes = measure_sizes(bundle, deb, root)

    # the service as its own user with the packaged config: its books land in /var/lib/cashier
    with RedisServer() as server:
        for argv in (("init",), ("open", "P-1", "--initial", "9.00", "--txn-id", "p-open")):
            root.run("cashierctl", "--redis-url", server.url, *argv)
        once = root.run("/opt/cashier/reconcile-service", "run", "--once", "--config", "/etc/cashier/reconcile.toml",
                        "--redis-url", server.url, "--log-format", "text", user=USER, check=False)
        assert once.returncode == 0, once.stdout + once.stderr
    books = root.path / "var/lib/cashier/reconcile.sqlite3"
    assert books.is_file() and os.stat(books).st_uid == int(passwd[2])

    # the units, checked by the root's own systemd against the installed tree
    verify = root.run("systemd-analyze", "verify", "cashier-reconcile.service", "cashier-gateway.service",
                      check=False)
    problems = [line for line in (verify.stdout + verify.stderr).splitlines()
                if "cashier-reconcile" in line or "reconcile-service" in line or "cashier-gateway" in line]
    assert verify.returncode == 0 and not problems, verify.stdout + verify.stderr

    # remove: programs gone; books, edited config and the user stay
    conf = root.path / "etc/cashier/reconcile.toml"
    conf.write_text(conf.read_text() + "\nbatch_size = 500   # edited by the shop\n")
    root.run("dpkg", "-r", "cashier")
    for gone in ("/opt/cashier", "/usr/bin/cashierctl", "/usr/bin/cashier-terminal", "/usr/bin/cashier-gateway",
                 "/lib/systemd/system/cashier-reconcile.service", "/lib/systemd/system/cashier-gateway.service",
                 "/usr/share/applications/cashier-terminal.desktop"):
        assert not root.exists(gone), gone
    assert books.is_file() and "edited by the shop" in conf.read_text()
    assert root.exists("/etc/cashier/reconcile.env") and root.run("getent", "passwd", USER).returncode == 0
    assert root.exists("/etc/cashier/gateway.env") and root.run("getent", "passwd", GATEWAY_USER).returncode == 0
    assert not before - directories(root), sorted(before - directories(root))   # /opt above all

    # purge: the books, the config, the secrets and the user go too
    root.run("dpkg", "-P", "cashier")
    for gone in ("/var/lib/cashier", "/etc/cashier"):
        assert not root.exists(gone), gone
    for user in (USER, GATEWAY_USER):
        assert root.run("getent", "passwd", user, check=False).returncode == 2, user
        assert root.run("getent", "group", user, check=False).returncode == 2, user
    assert "cashier" not in root.run("dpkg-query", "-W", "-f", "${Package}\\n").stdout.split()
    assert not before - directories(root), sorted(before - directories(root))
    assert oct(os.stat(root.path / "opt").st_mode & 0o7777) == "0o755"
    check_docs_quote(sizes)
