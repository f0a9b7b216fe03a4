#!/usr/bin/env python3
"""The version has one source: include/resmon.h, which CMakeLists.txt reads
into the project VERSION (and the soname, libresmon.so.SOVERSION).  The copies
that cannot be generated from it are checked here against it:

- python/pyproject.toml's [project] version,
- debian/changelog's newest entry (its upstream part, before the Debian revision),
- the man page's footer (doc/resmon.1, .TH's fourth field "resmon VERSION"),
- the Debian library package, named after the soname as Debian's policy has it
  (libresmon.so.0.4 is in libresmon0.4): debian/control, its symbols file and
  the files named after it,
- CHANGELOG.md: the newest released section is "## [VERSION] - YYYY-MM-DD",
- the "since X.Y" / "Added in X.Y" tags of include/resmon.h: none newer than
  the version (a call tagged "since 0.4" in a 0.3.0 library is a lie), and the
  symbols file's minimal versions: none newer either,
- tests/consumer/CMakeLists.txt's find_package(resmon X.Y): the soname's X.Y.

Usage: check_versions.py PROJECT_VERSION SOVERSION SOURCE_DIR"""
import pathlib
import re
import shlex
import sys

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None


def pyproject_version(path):
    text = path.read_text()
    if tomllib:
        project = tomllib.loads(text).get("project", {})
        if "version" not in project:
            return "(no static [project] version: %s)" % ("dynamic" if "version" in project.get("dynamic", []) else "absent")
        return project["version"]
    match = re.search(r'^\[project\][^\[]*?^version\s*=\s*"([^"]+)"', text, re.M | re.S)
    return match.group(1) if match else "(not found)"


def debian_changelog_version(path):
    match = re.match(r"resmon \(([^)\s]+)\)", path.read_text())
    if not match:
        return "(no 'resmon (VERSION)' first line)"
    version = match.group(1)
    version = version.split(":", 1)[-1]  # epoch
    return version.rsplit("-", 1)[0] if "-" in version else version


def man_page_version(path):
    for line in path.read_text().splitlines():
        if line.startswith(".TH "):
            fields = shlex.split(line[4:])
            if len(fields) >= 4 and fields[3].startswith("resmon "):
                return fields[3][len("resmon "):]
            return "(.TH has no 'resmon VERSION' field: %r)" % line
    return "(no .TH line)"


def version_key(text):
    return tuple(int(part) for part in text.split("."))


def changelog_problems(path, version):
    released = re.findall(r"^## \[(\d+(?:\.\d+)+)\](.*)$", path.read_text(), re.M)
    if not released:
        return [f"{path.name} has no released section (## [X.Y.Z] - DATE)"]
    newest, rest = released[0]
    problems = []
    if newest != version:
        problems.append(f"{path.name}'s newest released section is {newest}, the project version is {version}")
    if not re.fullmatch(r" - \d{4}-\d{2}-\d{2}", rest):
        problems.append(f"{path.name}: section [{newest}] has no date (' - YYYY-MM-DD'): {rest!r}")
    return problems


def since_tag_problems(path, version):
    current = version_key(version)[:2]
    problems = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        for tag in re.findall(r"(?:[Ss]ince|[Aa]dded in) (\d+\.\d+)\b", line):
            if version_key(tag)[:2] > current:
                problems.append(f"{path.name}:{number} says 'since {tag}', the project version is {version}")
    return problems


def symbol_version_problems(path, version):
    problems = []
    for line in path.read_text().splitlines():
        match = re.match(r"^ (\S+)@\S+ (\d+(?:\.\d+)+)", line)
        if match and version_key(match.group(2)) > version_key(version):
            problems.append(f"{path.name}: {match.group(1)} needs {match.group(2)}, newer than {version}")
    return problems


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    version, soversion, root = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
    problems = []
    for where, found in (
        ("python/pyproject.toml", pyproject_version(root / "python/pyproject.toml")),
        ("debian/changelog", debian_changelog_version(root / "debian/changelog")),
        ("doc/resmon.1 (.TH footer)", man_page_version(root / "doc/resmon.1")),
    ):
        if found != version:
            problems.append(f"{where} says {found}, the project version (include/resmon.h) is {version}")

    library = f"libresmon{soversion}"
    debian = root / "debian"
    control = (debian / "control").read_text()
    packages = re.findall(r"^Package:\s*(\S+)", control, re.M)
    if library not in packages:
        others = [p for p in packages if p.startswith("libresmon") and p != "libresmon-dev"]
        problems.append(f"debian/control has no package {library} for libresmon.so.{soversion} "
                        f"(it has {others}): rename the package and its debian/ files")
    if not re.search(rf"^\s*{re.escape(library)} \(= \$\{{binary:Version\}}\)", control, re.M):
        problems.append(f"debian/control: libresmon-dev does not depend on {library} (= ${{binary:Version}})")
    symbols = debian / f"{library}.symbols"
    if not symbols.exists():
        problems.append(f"{symbols.relative_to(root)} is missing")
    elif not symbols.read_text().startswith(f"libresmon.so.{soversion} {library} "):
        problems.append(f"{symbols.relative_to(root)} does not begin with 'libresmon.so.{soversion} {library} '")
    for name in (f"{library}.install", f"{library}.lintian-overrides"):
        if not (debian / name).exists():
            problems.append(f"debian/{name} is missing")
    stale = sorted(p.name for p in debian.glob("libresmon[0-9]*") if not p.name.startswith(library + "."))
    if stale:
        problems.append(f"debian/ has files of another library package: {stale}")

    problems += changelog_problems(root / "CHANGELOG.md", version)
    problems += since_tag_problems(root / "include/resmon.h", version)
    consumer = root / "tests/consumer/CMakeLists.txt"
    for asked in sorted(set(re.findall(r"find_package\(resmon ([0-9][0-9.]*)", consumer.read_text()))):
        if asked != soversion:  # 0.x: a minor is a new ABI, so a consumer asks for this one
            problems.append(f"tests/consumer/CMakeLists.txt asks find_package(resmon {asked}), the soname is {soversion}")
    problems += symbol_version_problems(symbols, version) if symbols.exists() else []

    for problem in problems:
        print("check_versions:", problem, file=sys.stderr)
    if problems:
        sys.exit(1)
    print(f"check_versions: {version} (soname libresmon.so.{soversion}, package {library}) everywhere")


if __name__ == "__main__":
    main()
