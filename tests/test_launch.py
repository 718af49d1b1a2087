"""One setting for where the notebooks launch from (optbook.launch): _config.yml's repository
(url, branch) and the package version's release, copied into every chapter's Colab install cell,
the README and how-to-use; they must agree."""
import shutil
from pathlib import Path

import jupytext
import pytest

from optbook import launch, twins

ROOT = Path(__file__).resolve().parents[1]


def test_launch_targets_agree():
    assert launch.disagreements(ROOT) == []


def test_setting_is_the_one_the_launch_buttons_read():
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    target = launch.read(ROOT)
    assert target.url == config["repository"]["url"] and target.branch == config["repository"]["branch"]
    assert target.release == f"v{launch.package_version(ROOT)}"
    assert config["launch_buttons"]["binderhub_url"] and config["launch_buttons"]["colab_url"]
    assert config["html"]["use_repository_button"]


@pytest.mark.parametrize("md", twins.chapters(ROOT), ids=lambda p: p.name[:2])
def test_first_code_cell_is_the_hidden_colab_install_cell(md):
    first = next(c for c in jupytext.read(md).cells if c.cell_type == "code")
    assert "remove-cell" in first.metadata.get("tags", []), "first code cell must be the hidden install cell"
    assert f'"{launch.read(ROOT).install}"' in first.source


@pytest.fixture
def fork(tmp_path):
    """A copy of the files the setting reaches, with the first two chapters."""
    for name in ("_config.yml", "pyproject.toml", "README.md", "book/how-to-use.md", "src/optbook/__init__.py",
                 *[str(p.relative_to(ROOT)) for p in twins.chapters(ROOT)[:2]]):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def test_a_fork_changes_one_line_and_sync_carries_it_everywhere(fork):
    config = fork / "_config.yml"
    config.write_text(config.read_text().replace("url: https://github.com/frontiers-of-optimization/book",
                                                 "url: https://github.com/someone/optbook-fork"))
    bad = launch.disagreements(fork)
    assert len(bad) == 4, bad  # two chapters, the README, how-to-use
    changed = launch.sync(fork)
    assert len(changed) == 4 and launch.disagreements(fork) == []
    chapter = twins.chapters(fork)[0].read_text()
    assert '"optbook @ git+https://github.com/someone/optbook-fork@v' in chapter
    readme = (fork / "README.md").read_text()
    assert "colab.research.google.com/github/someone/optbook-fork/blob/main/book/part1-classical/01-" in readme
    assert "git clone https://github.com/someone/optbook-fork" in (fork / "book/how-to-use.md").read_text()
    assert launch.sync(fork) == []  # idempotent


def test_a_version_bump_moves_the_release(fork):
    py = fork / "pyproject.toml"
    py.write_text(py.read_text().replace('version = "', 'version = "9.', 1))
    assert any("__version__" in b for b in launch.disagreements(fork))
    launch.sync(fork)
    assert '@v9.' in twins.chapters(fork)[0].read_text()


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="url"):
        launch.LaunchTarget(url="https://gitlab.com/a/b", branch="main", release="v1")
    with pytest.raises(ValueError, match="branch"):
        launch.LaunchTarget(url="https://github.com/a/b", branch="", release="v1")


@pytest.mark.book
@pytest.mark.parametrize("md", twins.chapters(ROOT), ids=lambda p: p.name[:2])
def test_built_launch_buttons_open_the_twin_from_the_setting(md):
    """The Binder and Colab buttons of the built page open this chapter's twin at the setting's
    repository and branch (a theme option that wipes them, or a moved twin, fails here)."""
    import os
    import re

    html = Path(os.environ.get("OPTBOOK_HTML") or ROOT / "_build" / "html")
    page = html / md.relative_to(ROOT).with_suffix(".html")
    if not page.exists():
        pytest.fail(f"no built page {page}: run `make book` first")
    links = set(re.findall(r'href="(https://(?:mybinder\.org|colab\.research\.google\.com)[^"]*)"', page.read_text()))
    target, twin = launch.read(ROOT), md.relative_to(ROOT).with_suffix(".ipynb").as_posix()
    assert links == {target.binder(twin), target.colab(twin)}
