"""Image: draws a PNG from your words — file artifacts, inline and by URL (`samples` extra).

Shows: an artifact of FileParts, one carrying the PNG inline (base64 `bytes`), one naming a
URL (`uri`) that the agent itself serves from a route of its own (`Agent(routes=...)`),
built from the URL the agent is served at (`RequestContext.base_url`). The same prompt always
gives the same bytes, and the URL holds the prompt, so any replica can serve it.

    accord serve accord.samples.image:agent
    accord send http://127.0.0.1:8000 "three red circles on a night sky"
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import re

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

import accord
from accord.agents import EventSink
from accord.samples.drawing import MAX_PROMPT, draw, normalized
from accord.types import AgentSkill, FilePart, FileWithBytes, FileWithUri, TaskState

PNG = "image/png"
IMAGE_PATH = "/images/{token}.png"


def image_token(prompt: str) -> str:
    """The prompt, URL-safe: the name of its image under /images/."""
    return base64.urlsafe_b64encode(prompt.encode()).decode().rstrip("=")


def prompt_of(token: str) -> str | None:
    """The prompt an image token holds, or None if it holds none we would draw."""
    try:
        prompt = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    return prompt if problem(prompt) is None and image_token(prompt) == token else None


def problem(prompt: str) -> str | None:
    """Why `prompt` cannot be drawn, as a request to the user (None: it can)."""
    if not normalized(prompt):
        return "Describe the picture you want, for example: three red circles on a night sky."
    if len(prompt) > MAX_PROMPT:
        return f"Please describe the picture in at most {MAX_PROMPT} characters."
    return None


def file_name(prompt: str) -> str:
    """A file name from the prompt's first words: `three-red-circles.png`."""
    return "-".join(re.findall(r"[a-z0-9]+", normalized(prompt))[:6] or ["image"]) + ".png"


async def serve_image(request: Request) -> Response:
    """GET /images/{token}.png: the picture of the prompt the token holds."""
    prompt = prompt_of(request.path_params["token"])
    if prompt is None:
        return PlainTextResponse("No such image.", status_code=404)
    png = await asyncio.to_thread(draw, prompt)
    return Response(png, media_type=PNG, headers={"Cache-Control": "public, max-age=86400"})


class ImageAgent(accord.AgentExecutor):
    """Draws the prompt; links to the picture when it knows the URL it is served at.

    `base_url` is used when the request does not tell (`RequestContext.base_url`).
    """

    def __init__(self, base_url: str | None = None) -> None:
        self.base_url = base_url

    async def execute(self, context: accord.RequestContext, events: EventSink) -> None:
        task = accord.TaskUpdater(context, events)
        await task.start_work()
        prompt = context.text.strip()
        wrong = problem(prompt)
        if wrong is not None:
            await task.requires_input(wrong)
            return
        await task.update_status(TaskState.WORKING, f"Drawing: {prompt}")
        png = await asyncio.to_thread(draw, prompt)
        name = file_name(prompt)
        inline = FileWithBytes(bytes=base64.b64encode(png).decode(), mime_type=PNG, name=name)
        parts = [FilePart(file=inline)]
        base_url = context.base_url or self.base_url
        if base_url:
            uri = base_url.rstrip("/") + IMAGE_PATH.format(token=image_token(prompt))
            parts.append(FilePart(file=FileWithUri(uri=uri, mime_type=PNG, name=name)))
        await task.add_artifact(parts, name=name, description=prompt)
        await task.complete(f"Here is your picture of: {prompt}")


def image_agent(base_url: str | None = None) -> accord.Agent:
    """The image agent (with `base_url` as the URL it is served at, if the request lacks it)."""
    return accord.Agent(
        ImageAgent(base_url),
        name="Image",
        description="Draws a picture (PNG) of shapes and colours from your words.",
        skills=[
            AgentSkill(
                id="draw_image",
                name="Draw a picture",
                description=(
                    "Draws a PNG from a description: colours, shapes (circles, squares, "
                    "triangles, stars) and scenes (night, sea, sunset) taken from the words. "
                    "Returns it inline and as a URL."
                ),
                tags=["image", "png", "files"],
                examples=["three red circles on a night sky", "a gold star over the sea"],
                output_modes=[PNG],
            )
        ],
        input_modes=["text/plain"],
        output_modes=[PNG, "text/plain"],
        routes=[Route(IMAGE_PATH, serve_image, methods=["GET"])],
    )


agent = image_agent()
