"""The expense sample's receipts: a file part checked, acknowledged and recorded with the
expense, over a real server and in the UI; every file it cannot take answered in words."""

from __future__ import annotations

import base64
import hashlib
from contextlib import ExitStack

import pytest
from playwright.sync_api import Page, expect

from accord.samples import expense
from accord.samples.receipts import MAX_RECEIPT_BYTES, ReceiptRefused, receipt_in
from accord.types import DataPart, FilePart, FileWithBytes, FileWithUri, Message, Task, TaskState
from conftest import SchemaErrors
from sample_servers import check_card, data_of, finished, talk_to
from test_sample_expense import VALID, form_of, question_of
from ui_pages import serve_ui, turns

pytest_plugins = ["ui_browser"]

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40
PDF = b"%PDF-1.7\n" + b"receipt " * 100
JPEG = b"\xff\xd8\xff\xe0" + bytes(100)
SENTENCE = "taxi to the airport, 42.50 EUR on 2025-03-14"


def attached(content: bytes | str, name: str | None, media_type: str | None) -> FilePart:
    data = content if isinstance(content, str) else base64.b64encode(content).decode()
    return FilePart(file=FileWithBytes(bytes=data, name=name, mime_type=media_type))


def recorded(content: bytes, name: str, media_type: str) -> dict[str, object]:
    digest = hashlib.sha256(content).hexdigest()
    return {"name": name, "mediaType": media_type, "size": len(content), "sha256": digest}


async def first_answer(*files: FilePart, text: str = SENTENCE) -> Task:
    async with talk_to(expense.agent) as client:
        return finished(await client.send(text, parts=files), TaskState.INPUT_REQUIRED)


async def test_the_card_names_the_receipt_types_and_limit(schema_errors: SchemaErrors) -> None:
    card = await check_card(expense.agent, schema_errors)
    assert {"image/png", "image/jpeg", "application/pdf"} <= set(card["defaultInputModes"])
    [skill] = card["skills"]
    assert "at most 2.0 MiB" in skill["description"]
    assert "image/png, image/jpeg, image/webp or application/pdf" in skill["description"]
    assert any("receipt" in example for example in skill["examples"])


async def test_a_receipt_is_acknowledged_kept_in_the_form_and_recorded() -> None:
    receipt = recorded(PNG, "taxi.png", "image/png")
    async with talk_to(expense.agent) as client:
        asked = finished(
            await client.send(SENTENCE, parts=[attached(PNG, "taxi.png", "image/png")]),
            TaskState.INPUT_REQUIRED,
        )
        acknowledged = (
            f"Receipt taxi.png (image/png, 10.0 KiB, sha256 {str(receipt['sha256'])[:12]}) "
            "attached."
        )
        assert question_of(asked) == f"Please check and complete this form. {acknowledged}"
        assert form_of(asked)["receipt"] == receipt

        again = finished(
            await client.send("", parts=[DataPart(data={"amount": -1})], task_id=asked.id),
            TaskState.INPUT_REQUIRED,
        )
        assert question_of(again).endswith(acknowledged)  # kept while the form is corrected
        done = finished(await client.send("", parts=[DataPart(data=VALID)], task_id=asked.id))
    assert done.artifacts is not None
    record = data_of(done.artifacts[0])
    assert record["receipt"] == receipt
    assert question_of(done).endswith(
        f"on 2025-03-14. Receipt: taxi.png (image/png, 10.0 KiB, sha256 "
        f"{str(receipt['sha256'])[:12]})."
    )


async def test_a_receipt_with_a_filled_form_completes_at_once() -> None:
    message = Message.user("please reimburse")
    message.parts += [DataPart(data=VALID), attached(PDF, "invoice.pdf", "application/pdf")]
    async with talk_to(expense.agent) as client:
        done = finished(await client.send(message))
    assert done.artifacts is not None
    assert data_of(done.artifacts[0])["receipt"] == recorded(PDF, "invoice.pdf", "application/pdf")


async def test_a_receipt_without_a_media_type_is_typed_by_its_name() -> None:
    asked = await first_answer(attached(JPEG, "scan.jpg", None))
    assert form_of(asked)["receipt"] == recorded(JPEG, "scan.jpg", "image/jpeg")


@pytest.mark.parametrize(
    ("file", "refusal"),
    [
        (
            attached(b"\x89PNG\r\n\x1a\n" + bytes(3 * 2**20), "huge.png", "image/png"),
            "huge.png is 3.0 MiB; a receipt may be at most 2.0 MiB",
        ),
        (
            attached(b"taxi 42.50", "notes.txt", "text/plain"),
            "notes.txt is text/plain; a receipt must be image/png, image/jpeg, image/webp or "
            "application/pdf",
        ),
        (
            attached(PDF, "photo.png", "image/png"),
            "photo.png is said to be image/png, but its content is not a PNG image",
        ),
        (
            attached("not base64!", "taxi.png", "image/png"),
            "taxi.png's bytes are not valid base64",
        ),
        (
            FilePart(file=FileWithUri(uri="https://example.com/r.png", name="r.png")),
            "r.png was sent by URI (https://example.com/r.png); only attached files are "
            "accepted (the file's bytes in the message), this agent fetches no URLs",
        ),
    ],
    ids=["too-large", "wrong-type", "content-not-its-type", "bad-base64", "uri"],
)
async def test_a_file_it_cannot_take_is_answered_in_words(file: FilePart, refusal: str) -> None:
    asked = await first_answer(file)
    assert question_of(asked) == (
        f"Please check and complete this form. Receipt not accepted: {refusal}. Attach another "
        "with the form, or send the form as it is."
    )
    assert "receipt" not in form_of(asked)


async def test_a_refused_receipt_keeps_a_filled_form_waiting_until_sent_again() -> None:
    message = Message.user("please reimburse")
    message.parts += [DataPart(data=VALID), attached(b"GIF89a", "r.gif", "image/gif")]
    async with talk_to(expense.agent) as client:
        asked = finished(await client.send(message), TaskState.INPUT_REQUIRED)
        assert question_of(asked).startswith("Receipt not accepted: r.gif is image/gif;")
        done = finished(await client.send("", parts=[DataPart(data=VALID)], task_id=asked.id))
    assert done.artifacts is not None
    assert "receipt" not in data_of(done.artifacts[0])


async def test_one_receipt_per_expense() -> None:
    asked = await first_answer(attached(PNG, "a.png", "image/png"), attached(PDF, "b.pdf", None))
    assert "Receipt not accepted: attach one receipt per expense, not 2 files." in question_of(
        asked
    )


@pytest.mark.parametrize(
    ("content", "media_type", "accepted"),
    [
        (b"RIFF\x10\0\0\0WEBPVP8 ", "image/webp", True),
        (b"RIFF\x10\0\0\0WAVEfmt ", "image/webp", False),
        (JPEG, "image/jpeg", True),
        (PNG, "image/jpeg", False),
        (PDF, "application/pdf; charset=binary", True),
        (b"", "application/pdf", False),
    ],
)
def test_the_content_must_begin_as_its_type_does(
    content: bytes, media_type: str, accepted: bool
) -> None:
    message = Message.user("")
    message.parts.append(attached(content, "r", media_type))
    try:
        receipt_in(message)
    except ReceiptRefused:
        assert not accepted
    else:
        assert accepted


def test_the_limit_is_checked_on_the_decoded_bytes_too() -> None:
    at_limit = b"%PDF-" + bytes(MAX_RECEIPT_BYTES - 5)
    message = Message.user("")
    message.parts.append(attached(at_limit, "full.pdf", "application/pdf"))
    assert receipt_in(message) is not None
    message.parts[-1] = attached(at_limit + b"!", "over.pdf", "application/pdf")
    with pytest.raises(ReceiptRefused, match=r"over.pdf is 2.0 MiB; a receipt may be at most"):
        receipt_in(message)


def test_a_receipt_attached_in_the_ui_is_acknowledged_and_recorded(
    stack: ExitStack, page: Page
) -> None:
    ui = serve_ui(stack, expense.agent)
    page.goto(ui + "/")
    expect(page.locator("[name=agent] option")).not_to_have_count(0)
    page.fill("[name=message]", SENTENCE)
    page.set_input_files(
        "[name=file]", {"name": "taxi.png", "mimeType": "image/png", "buffer": PNG}
    )
    page.click("form.composer button")
    digest = hashlib.sha256(PNG).hexdigest()
    first = turns(page).nth(0)
    expect(first).to_contain_text(
        f"Receipt taxi.png (image/png, 10.0 KiB, sha256 {digest[:12]}) attached."
    )
    form = page.locator("form.a2a-form:has(button)")
    form.locator("[name=purpose]").fill("taxi to the airport")
    form.locator("button").click()
    done = turns(page).nth(1)
    expect(done.locator("[data-state]")).to_have_text("completed")
    expect(done).to_contain_text("Receipt: taxi.png (image/png, 10.0 KiB")
    expect(done.locator("[data-artifact=reimbursement]")).to_contain_text(digest)
