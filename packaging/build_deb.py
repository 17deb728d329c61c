"""Builds the shop's Debian package (`cashier_<version>_<arch>.deb`) from the PyInstaller
bundle of build.spec, with dpkg-deb. Run by `bash packaging/build-deb.sh` (which builds the
bundle first) or directly: `python3 packaging/build_deb.py --bundle dist/cashier --out dist`.

What the package holds (the layout docs/deployment.md describes):
  /opt/cashier/                       the bundle: cashier-terminal, reconcile-service, cashierctl,
                                      cashier-gateway, _internal/
  /usr/bin/<program>                  symlinks to /opt/cashier/<program> (the bootloader finds
                                      _internal/ through /proc/self/exe, i.e. the link's target)
  /usr/share/applications/cashier-terminal.desktop   menu entry (en, zh_CN)
  /usr/share/icons/hicolor/scalable/apps/cashier-terminal.svg
  /lib/systemd/system/cashier-reconcile.service      the reconcile daemon, as user cashier-reconcile
  /lib/systemd/system/cashier-gateway.service        the ledger gateway, as user cashier-gateway
  /etc/cashier/reconcile.toml         conffile (kept across upgrades when edited)
  /usr/share/doc/cashier/             README, deployment, operations and gateway docs, copyright
Neither unit is enabled on install. Maintainer scripts (packaging/deb/postinst, prerm,
postrm) create the two system users, /var/lib/cashier and the two secrets files
(/etc/cashier/reconcile.env, gateway.env: 0600), and on purge only delete them. postrm puts back
/opt when dpkg took it away (dpkg deletes a directory of the package that is empty and
owned by no other package, and /opt, made by debootstrap, belongs to none).

`Depends` is computed, not guessed: every shared library the bundle's ELF files link that
is not inside the bundle is looked up with `dpkg -S` on the build machine, and libc6's
minimum version is the newest GLIBC_x.y symbol version any file needs. Text needs what
no ELF file names (the bundle's fontconfig reads /etc/fonts/fonts.conf and finds fonts
through it; without them every character is an empty box), so TEXT_DEPENDS adds it:
fontconfig's configuration and a Latin font. Chinese needs a CJK font: RECOMMENDS, not
Depends (Debian policy: Recommends are what all but unusual installations have; apt
installs them by default, and an English-only till works without one; the terminal
started in zh_CN without one says so, and `--self-test` fails). WenQuanYi Micro Hei
first: 5 MB installed against Noto Sans CJK's 91 MB, and it covers GB 2312/GBK, the
till's text; a machine that has fonts-noto-cjk (the back office's PDF reports use it)
satisfies the alternative.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEB_DIR = Path(__file__).resolve().parent / "deb"
PACKAGE = "cashier"
INSTALL_DIR = Path("opt") / PACKAGE
PROGRAMS = ("cashier-terminal", "reconcile-service", "cashierctl", "cashier-gateway")
UNIT_NAME = "cashier-reconcile.service"
GATEWAY_UNIT_NAME = "cashier-gateway.service"
DEBIAN_REVISION = "1"
# What drawing text needs that no ELF file names (see the docstring).
TEXT_DEPENDS = ("fontconfig-config", "fonts-dejavu-core")
RECOMMENDS = ("fonts-wqy-microhei | fonts-noto-cjk",)
# Libraries every Debian-family system has as part of libc6 (dpkg -S finds them in libc6 anyway).
LIBC_SONAMES = re.compile(r"^(libc|libm|libdl|libpthread|librt|libutil|libresolv|ld-linux[\w-]*)\.so")


def version() -> str:
    text = (ROOT / "core" / "__init__.py").read_text()
    return re.search(r'__version__ = "([^"]+)"', text).group(1)


def architecture() -> str:
    return subprocess.run(["dpkg", "--print-architecture"], check=True, capture_output=True,
                          text=True).stdout.strip()


def elf_files(folder: Path) -> list[Path]:
    found = []
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            with path.open("rb") as fh:
                if fh.read(4) == b"\x7fELF":
                    found.append(path)
    return found


def _readelf(args: list[str], path: Path) -> str:
    return subprocess.run(["readelf", *args, str(path)], capture_output=True, text=True).stdout


def depends(bundle: Path) -> list[str]:
    """Debian dependencies of the bundle: packages of the system libraries it links."""
    elves = elf_files(bundle)
    inside = {p.name for p in bundle.rglob("*")}
    needed: set[str] = set()
    glibc = (2, 17)
    for path in elves:
        needed |= set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", _readelf(["-d"], path)))
        for major, minor in re.findall(r"GLIBC_(\d+)\.(\d+)", _readelf(["--version-info", "-W"], path)):
            glibc = max(glibc, (int(major), int(minor)))
    outside = sorted(name for name in needed - inside if not LIBC_SONAMES.match(name))
    cache = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    wide = architecture() in ("amd64", "arm64")
    packages: set[str] = set()
    unresolved = []
    for soname in outside:
        paths = [path for flags, path in
                 re.findall(rf"^\s*{re.escape(soname)} \(([^)]*)\) => (\S+)$", cache, re.MULTILINE)
                 if ("64" in flags) == wide]
        if not paths:
            unresolved.append(soname)
            continue
        path = paths[0]
        # merged /usr: ldconfig says /lib/..., dpkg may know /usr/lib/... (or the reverse)
        other = path[4:] if path.startswith("/usr/") else "/usr" + path
        for candidate in (path, other, os.path.realpath(path)):
            owner = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True)
            if owner.returncode == 0:
                break
        if owner.returncode != 0:
            unresolved.append(soname)
            continue
        packages.add(owner.stdout.split(":", 1)[0].strip())
    if unresolved:
        raise SystemExit(f"build_deb: no Debian package provides {', '.join(unresolved)} on this machine")
    packages.discard("libc6")
    packages.update(TEXT_DEPENDS)
    return [f"libc6 (>= {glibc[0]}.{glibc[1]})"] + sorted(packages)


def installed_size_kib(tree: Path) -> int:
    return sum(p.lstat().st_size for p in tree.rglob("*") if not p.is_dir()) // 1024 + 1


CONTROL = """\
Package: {package}
Version: {version}
Architecture: {arch}
Maintainer: Cashier ledger maintainers <cashier@localhost>
Installed-Size: {size}
Depends: {depends}
Recommends: {recommends}
Section: misc
Priority: optional
Homepage: https://example.invalid/cashier
Description: cashier system for shops selling prepaid member cards
 The cashier terminal (cashier-terminal, a Qt desktop program, with a menu
 entry), the reconcile service (reconcile-service, a systemd unit that is not
 enabled on install: run it on the back-office machine), the ledger gateway
 the tills talk to (cashier-gateway, a systemd unit, not enabled on install
 either) and the admin command line (cashierctl). Programs in /opt/cashier,
 commands in /usr/bin, settings in /etc/cashier, the service's books in
 /var/lib/cashier (kept on remove, deleted on purge).
"""


def stage(bundle: Path, tree: Path) -> None:
    """Lay out the package's files under `tree` (the future /)."""
    opt = tree / INSTALL_DIR
    shutil.copytree(bundle, opt, symlinks=True)
    (tree / "usr/bin").mkdir(parents=True)
    for program in PROGRAMS:
        if not (opt / program).is_file():
            raise SystemExit(f"build_deb: {bundle} has no {program}: is it the bundle of build.spec?")
        (tree / "usr/bin" / program).symlink_to(Path("/") / INSTALL_DIR / program)
    copies = {
        DEB_DIR / "cashier-terminal.desktop": "usr/share/applications/cashier-terminal.desktop",
        DEB_DIR / "cashier-terminal.svg": "usr/share/icons/hicolor/scalable/apps/cashier-terminal.svg",
        DEB_DIR / "reconcile-service.service": f"lib/systemd/system/{UNIT_NAME}",
        DEB_DIR / "cashier-gateway.service": f"lib/systemd/system/{GATEWAY_UNIT_NAME}",
        DEB_DIR / "reconcile.toml": "etc/cashier/reconcile.toml",
        ROOT / "README.md": "usr/share/doc/cashier/README.md",
        ROOT / "docs/deployment.md": "usr/share/doc/cashier/deployment.md",
        ROOT / "docs/operations.md": "usr/share/doc/cashier/operations.md",
        ROOT / "docs/gateway.md": "usr/share/doc/cashier/gateway.md",
        DEB_DIR / "copyright": "usr/share/doc/cashier/copyright",
    }
    for source, dest in copies.items():
        target = tree / dest
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        target.chmod(0o644)
    # Only the owner writes; the programs stay executable for everyone.
    for path in tree.rglob("*"):
        if path.is_symlink():
            continue
        mode = path.stat().st_mode
        path.chmod(0o755 if path.is_dir() or mode & 0o111 else 0o644)


def build(bundle: Path, out_dir: Path, compression: str = "xz") -> Path:
    bundle = bundle.resolve()
    if not bundle.is_dir():
        raise SystemExit(f"build_deb: bundle {bundle} does not exist: run `pyinstaller build.spec` first")
    for tool in ("dpkg-deb", "readelf", "ldconfig"):
        if shutil.which(tool) is None:
            raise SystemExit(f"build_deb: {tool} is missing (apt install dpkg-dev binutils)")
    arch = architecture()
    deb_version = f"{version()}-{DEBIAN_REVISION}"
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{PACKAGE}_{deb_version}_{arch}.deb"
    with tempfile.TemporaryDirectory(prefix="cashier-deb-") as scratch:
        tree = Path(scratch) / "root"
        stage(bundle, tree)
        control_dir = tree / "DEBIAN"
        control_dir.mkdir()
        (control_dir / "control").write_text(CONTROL.format(
            package=PACKAGE, version=deb_version, arch=arch, size=installed_size_kib(tree),
            depends=", ".join(depends(bundle)), recommends=", ".join(RECOMMENDS)))
        (control_dir / "conffiles").write_text("/etc/cashier/reconcile.toml\n")
        for script in ("postinst", "prerm", "postrm"):
            shutil.copyfile(DEB_DIR / script, control_dir / script)
            (control_dir / script).chmod(0o755)
        for name in ("control", "conffiles"):
            (control_dir / name).chmod(0o644)
        # --root-owner-group: every file root:root whoever builds. xz (dpkg's default, every
        # dpkg reads it) makes the smallest file but takes minutes on 200 MB; gzip -1 takes
        # seconds (the tests use it: what they check does not depend on the compression).
        level = ["-z1"] if compression == "gzip" else []
        subprocess.run(["dpkg-deb", "--root-owner-group", f"-Z{compression}", *level, "--build",
                        str(tree), str(target)], check=True, stdout=subprocess.DEVNULL)
    return target


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="build_deb.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--bundle", default=str(ROOT / "dist" / "cashier"),
                   help="the PyInstaller folder of build.spec (default dist/cashier)")
    p.add_argument("--out", default=str(ROOT / "dist"), help="where the .deb goes (default dist/)")
    p.add_argument("--compression", choices=("xz", "gzip"), default="xz",
                   help="xz: smallest, minutes to pack (default); gzip: fast, bigger")
    args = p.parse_args(argv)
    deb = build(Path(args.bundle), Path(args.out), args.compression)
    print(f"built {deb} ({deb.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
