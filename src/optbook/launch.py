"""Where the book's notebooks launch from: one setting, copied everywhere it is needed.

The setting is ``repository:`` in ``_config.yml`` (``url``, ``branch``), which Jupyter Book's
launch buttons (Binder, Colab) already read, with the release ``v<version>`` of the package
(``version`` in pyproject.toml). :func:`sync` copies it into what cannot read it at run time:
the Colab install cell of every chapter (Colab has no checkout to read it from), the README's
launch block and the clone command in ``book/how-to-use.md``; :func:`disagreements` lists what
differs (the test fails on any).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(".")  # the project root: the commands run there (`make notebooks`)
# The install line of a chapter's Colab cell: "optbook @ git+<url>@<release>".
INSTALL = re.compile(r'"optbook @ git\+(?P<url>[^"@\s]+)@(?P<release>[^"\s]+)"')
CLONE = re.compile(r"git clone (?P<url>\S+)")
README_START, README_END = "<!-- launch-targets: written by `make notebooks` -->", "<!-- /launch-targets -->"


@dataclass(frozen=True)
class LaunchTarget:
    """The repository, branch and release the notebooks launch from."""

    url: str
    branch: str
    release: str
    binderhub_url: str = "https://mybinder.org"
    colab_url: str = "https://colab.research.google.com"
    interface: str = "jupyterlab"

    def __post_init__(self):
        if not re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", self.url):
            raise ValueError(f"url must be https://github.com/<owner>/<repo> (Colab opens GitHub "
                             f"notebooks only), got {self.url!r}")
        if not self.branch or any(c.isspace() for c in self.branch):
            raise ValueError(f"branch must be a git branch name, got {self.branch!r}")

    @property
    def slug(self) -> str:
        """``owner/repo``."""
        return self.url.removeprefix("https://github.com/")

    @property
    def install(self) -> str:
        """The pip requirement of the Colab install cell."""
        return f"optbook @ git+{self.url}@{self.release}"

    def binder(self, notebook: str) -> str:
        """The Binder link that opens ``notebook`` (a path in the repository), as the book's
        launch button builds it."""
        ui = "lab/tree" if self.interface == "jupyterlab" else "tree"
        return f"{self.binderhub_url.rstrip('/')}/v2/gh/{self.slug}/{self.branch}?urlpath={ui}/{notebook}"

    def colab(self, notebook: str) -> str:
        """The Colab link that opens ``notebook`` (a path in the repository)."""
        return f"{self.colab_url.rstrip('/')}/github/{self.slug}/blob/{self.branch}/{notebook}"


def package_version(root: Path = ROOT) -> str:
    """``version`` of [project] in ``root``'s pyproject.toml."""
    m = re.search(r'^\[project\][^\[]*?^version\s*=\s*"([^"]+)"', (Path(root) / "pyproject.toml").read_text(),
                  re.MULTILINE | re.DOTALL)
    if not m:
        raise ValueError(f"root={str(root)!r}: pyproject.toml has no [project] version")
    return m.group(1)


def read(root: Path = ROOT) -> LaunchTarget:
    """The launch target set in ``root``'s _config.yml and pyproject.toml."""
    import yaml

    config = yaml.safe_load((Path(root) / "_config.yml").read_text())
    repo = config.get("repository") or {}
    buttons = config.get("launch_buttons") or {}
    version = package_version(root)
    return LaunchTarget(url=str(repo.get("url", "")).rstrip("/"), branch=str(repo.get("branch", "")),
                        release=f"v{version}",
                        binderhub_url=buttons.get("binderhub_url", LaunchTarget.binderhub_url),
                        colab_url=buttons.get("colab_url", LaunchTarget.colab_url),
                        interface=buttons.get("notebook_interface", LaunchTarget.interface))


def readme_block(target: LaunchTarget, first_chapter: str) -> str:
    """The README's launch block: repository, branch, release, and links for ``first_chapter``
    (its notebook's path in the repository)."""
    return "\n".join([
        README_START,
        f"Repository {target.url}, branch `{target.branch}`, release `{target.release}`.",
        f"Chapter {Path(first_chapter).name[:2]} in [Binder]({target.binder(first_chapter)}) or "
        f"[Colab]({target.colab(first_chapter)}); the package alone: "
        f'`pip install "{target.install}"`.',
        README_END])


def _chapters(root: Path) -> list[Path]:
    return sorted((Path(root) / "book").glob("part*/[0-9][0-9]-*.md"))


def _readme(root: Path, target: LaunchTarget) -> tuple[str, str]:
    text = (Path(root) / "README.md").read_text()
    first = _chapters(root)[0].resolve().relative_to(Path(root).resolve()).with_suffix(".ipynb").as_posix()
    block = readme_block(target, first)
    pattern = re.compile(re.escape(README_START) + r".*?" + re.escape(README_END), re.DOTALL)
    return text, pattern.sub(lambda _: block, text) if pattern.search(text) else text


def disagreements(root: Path = ROOT) -> list[str]:
    """Every place whose repository, branch or release differs from the setting (empty: all agree)."""
    root = Path(root)
    target = read(root)
    bad = []
    init = re.search(r'^__version__ = "([^"]+)"', (root / "src/optbook/__init__.py").read_text(), re.MULTILINE)
    if not init or f"v{init.group(1)}" != target.release:
        bad.append(f"src/optbook/__init__.py: __version__ {init and init.group(1)} differs from "
                   f"pyproject.toml's {target.release[1:]}")
    for md in _chapters(root):
        found = [m.group(0).strip('"') for m in INSTALL.finditer(md.read_text())]
        if found != [target.install]:
            bad.append(f"{md}: install cell has {found}, setting gives {target.install!r}")
    text, synced = _readme(root, target)
    if README_START not in text:
        bad.append(f"README.md: no launch block ({README_START})")
    elif text != synced:
        bad.append("README.md: launch block differs from the setting")
    for m in CLONE.finditer((root / "book" / "how-to-use.md").read_text()):
        if m.group("url") != target.url:
            bad.append(f"book/how-to-use.md: clones {m.group('url')}, setting gives {target.url}")
    return bad


def sync(root: Path = ROOT) -> list[Path]:
    """Copy the setting into the chapters' install cells, the README and how-to-use; returns the
    files changed."""
    root = Path(root)
    target = read(root)
    changed = []
    for path in [*_chapters(root), root / "book" / "how-to-use.md"]:
        text = path.read_text()
        new = INSTALL.sub(f'"{target.install}"', text)
        new = CLONE.sub(f"git clone {target.url}", new)
        if new != text:
            path.write_text(new)
            changed.append(path)
    text, synced = _readme(root, target)
    if synced != text:
        (root / "README.md").write_text(synced)
        changed.append(root / "README.md")
    return changed
