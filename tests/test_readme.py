"""Every code example of README.md and docs/*.md runs as written (see doc_examples)."""

from __future__ import annotations

from pathlib import Path

import pytest

from doc_examples import ROOT, Block, blocks, commands, reader, transcript

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def document_id(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.processes
@pytest.mark.parametrize("document", DOCUMENTS, ids=document_id)
def test_every_example_runs(document: Path, tmp_path: Path) -> None:
    with reader(tmp_path) as person:
        for block in blocks(document):
            if not block.skipped:
                person.run_block(block)


@pytest.mark.parametrize("document", DOCUMENTS, ids=document_id)
def test_every_block_is_run_or_says_it_is_not(document: Path) -> None:
    """A block runs (python, sh, console), says skip, or is a picture of what something looks
    like (no language, text, json: wire shapes with elisions)."""
    for block in blocks(document):
        assert block.language in {"python", "sh", "console", "", "text", "json"}, block
        if block.language == "python":
            compile(block.text, f"{document.name}:{block.line}", "exec")


def test_skips_are_rare() -> None:
    skipped = [block for document in DOCUMENTS for block in blocks(document) if block.skipped]
    # remote PostgreSQL/Redis, minutes of benchmarks, certificates of the reader's own
    assert len(skipped) <= 5, skipped


def test_shell_blocks_split_into_commands() -> None:
    text = "accord serve a:b --port 8000  # a server\n\naccord send URL \\\n    'hi # there'\n"
    assert commands(text) == [
        "accord serve a:b --port 8000  # a server",
        "accord send URL  'hi # there'",
    ]


def test_a_transcript_pairs_commands_with_their_output() -> None:
    text = "$ accord send URL hi\nhi\n(done)\n$ accord --version\naccord 0.1.0\n"
    assert list(transcript(text)) == [
        ("accord send URL hi", ["hi", "(done)"]),
        ("accord --version", ["accord 0.1.0"]),
    ]


def test_block_words_after_the_language() -> None:
    block = Block("python", ("file=greeter.py",), "", 1)
    assert block.file_name == "greeter.py" and not block.skipped
    assert Block("sh", ("skip",), "", 1).skipped
