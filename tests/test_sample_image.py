"""The image sample: a PNG inline and at a URL the agent serves, the same for the same prompt."""

from __future__ import annotations

import base64
import io
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from PIL import Image

from accord import Client
from accord.samples import image
from accord.samples.drawing import HEIGHT, WIDTH
from accord.samples.image import ImageAgent, image_agent
from accord.types import FilePart, FileWithBytes, FileWithUri, Task, TaskState
from agents_for_tests import SAFETY_TIMEOUT
from conftest import SchemaErrors
from sample_servers import check_card, finished, talk_to

PROMPT = "three red circles and a gold star on a night sky"


def files_of(task: Task) -> tuple[FileWithBytes, FileWithUri]:
    assert task.artifacts is not None
    [artifact] = task.artifacts
    inline, linked = (p.file for p in artifact.parts if isinstance(p, FilePart))
    assert isinstance(inline, FileWithBytes) and isinstance(linked, FileWithUri)
    assert inline.mime_type == linked.mime_type == "image/png"
    return inline, linked


@asynccontextmanager
async def image_service() -> AsyncIterator[tuple[Client, httpx.AsyncClient]]:
    """The image agent served on loopback and told its URL (the one its card gives)."""
    agent = image_agent()
    async with talk_to(agent) as client, httpx.AsyncClient(timeout=SAFETY_TIMEOUT) as http:
        assert isinstance(agent.executor, ImageAgent)
        agent.executor.base_url = (await client.get_card()).url
        yield client, http


async def test_card_validates_and_describes_the_skill(schema_errors: SchemaErrors) -> None:
    card = await check_card(image.agent, schema_errors)
    assert "image/png" in card["defaultOutputModes"]


async def test_the_png_comes_inline_and_from_the_agents_own_url() -> None:
    async with image_service() as (client, http):
        task = finished(await client.send(PROMPT))
        inline, linked = files_of(task)
        png = base64.b64decode(inline.bytes)
        picture = Image.open(io.BytesIO(png))
        assert (picture.format, picture.size) == ("PNG", (WIDTH, HEIGHT))
        assert inline.name == linked.name == "three-red-circles-and-a-gold.png"

        served_png = await http.get(linked.uri)
        assert served_png.status_code == 200
        assert served_png.headers["content-type"] == "image/png"
        assert served_png.content == png


async def test_the_same_prompt_gives_the_same_bytes_and_another_prompt_others() -> None:
    async with image_service() as (client, _):
        first, _ = files_of(finished(await client.send(PROMPT)))
        again, _ = files_of(finished(await client.send(PROMPT)))
        other, _ = files_of(finished(await client.send("a blue square in the sea")))
    assert first.bytes == again.bytes
    assert other.bytes != first.bytes


async def test_an_empty_prompt_is_asked_for_and_the_answer_drawn_in_the_same_task() -> None:
    async with image_service() as (client, _):
        asked = finished(await client.send("   "), TaskState.INPUT_REQUIRED)
        assert asked.status.message is not None
        assert asked.status.message.text.startswith("Describe the picture you want")
        done = finished(await client.send(PROMPT, task_id=asked.id))
    assert files_of(done)[0].bytes


async def test_a_too_long_prompt_is_refused_with_a_sentence() -> None:
    async with image_service() as (client, _):
        asked = finished(await client.send("star " * 100), TaskState.INPUT_REQUIRED)
    assert asked.status.message is not None
    assert asked.status.message.text == "Please describe the picture in at most 300 characters."


async def test_an_image_url_that_holds_no_prompt_is_not_found() -> None:
    async with image_service() as (client, http):
        base_url = (await client.get_card()).url.rstrip("/")
        for token in ["%%%", "", "c3Rhcg=", base64.urlsafe_b64encode(b"x" * 400).decode()]:
            response = await http.get(f"{base_url}/images/{token}.png")
            assert response.status_code == 404, token
