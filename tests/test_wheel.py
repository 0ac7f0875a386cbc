"""A wheel built from the repository, installed in a clean virtual environment outside the checkout,
indexes and serves the demo with its templates."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import urllib.request
import zipfile
from pathlib import Path

import pytest
from conftest import free_port, wait_until_up

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out),
                    str(ROOT)], check=True, capture_output=True)
    (found,) = out.glob("podsearch_server-*.whl")
    return found


def test_wheel_holds_templates_and_sample(wheel: Path):
    names = zipfile.ZipFile(wheel).namelist()
    assert "podsearch/templates/search.html" in names
    assert "podsearch/templates/episode.html" in names
    assert any(n.startswith("podsearch/sample/feeds/") and n.endswith(".xml") for n in names)
    assert any(n.startswith("podsearch/sample/transcripts/") for n in names)
    meta = next(n for n in names if n.endswith("METADATA"))
    text = zipfile.ZipFile(wheel).read(meta).decode()
    assert "Name: podsearch-server" in text and "whoosh3==3.54.0" in text


def test_wheel_in_a_clean_venv_serves_the_demo(wheel: Path, tmp_path: Path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    # The wheel itself goes in for real; its dependencies come from this environment's site-packages
    # (a plain path entry, so this environment's editable install of podsearch is not seen).
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "deps-from-test-env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True)
    where = subprocess.run([str(py), "-c", "import podsearch; print(podsearch.__file__)"], cwd=tmp_path,
                           capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(venv)), where
    env = {k: v for k, v in os.environ.items() if not k.startswith("PODSEARCH_")}
    port = free_port()
    proc = subprocess.Popen([str(venv / "bin" / "podsearch"), "--data", str(tmp_path / "data"), "-q", "demo",
                             "--port", str(port)], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        wait_until_up(f"http://127.0.0.1:{port}/healthz", proc, timeout=120)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/search?q=volcano", timeout=10) as resp:
            body = resp.read().decode()
        assert resp.status == 200 and "<mark>" in body and "podsearch" in body
    finally:
        proc.terminate()
        proc.wait(timeout=15)
