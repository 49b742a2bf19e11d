"""For the registry's tests: catalogs on each SQL backend, curators, 50 cards to rank, an agent
whose card changes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

import accord
from accord.auth import Bearer, Security
from accord.core import Principal
from accord.registry import CURATOR_SCOPE, CardCatalog, Registry, open_catalog
from accord.registry.records import AgentRecord
from accord.types import AgentCard, AgentSkill
from stores import SQL_BACKENDS, fresh_pg_schema, pg_schema_url

Json = dict[str, Any]


TOKEN = "curator-token"
READER = "reader-token"
CURATOR = {"Authorization": f"Bearer {TOKEN}"}


def security() -> Security:
    """The curator presents TOKEN; a reader presents READER and holds no curator scope."""

    def verify(token: str) -> Principal | None:
        if token == TOKEN:
            return Principal("curator", scopes=frozenset({CURATOR_SCOPE}))
        return Principal("reader") if token == READER else None

    return Security(Bearer(verify))


@asynccontextmanager
async def catalog_url(backend: str, tmp_path: Path) -> AsyncIterator[str]:
    """The URL of an empty database on `backend` (sqlite: a file in `tmp_path`; postgresql:
    a schema of its own, dropped afterwards)."""
    if backend == "postgresql":
        async with fresh_pg_schema() as schema:
            yield pg_schema_url(schema)
        return
    yield f"sqlite:///{tmp_path / 'registry.db'}"


@asynccontextmanager
async def catalog_on(backend: str, tmp_path: Path) -> AsyncIterator[CardCatalog]:
    """An empty catalog on `backend`, opened in this event loop."""
    async with catalog_url(backend, tmp_path) as url:
        catalog = open_catalog(url)
        await catalog.open()
        try:
            yield catalog
        finally:
            await catalog.close()


@pytest.fixture(name="registry", params=SQL_BACKENDS)
async def registry_fixture(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Registry]:
    """A registry on an empty catalog, each SQL backend in turn."""
    async with catalog_on(request.param, tmp_path) as catalog:
        registry = Registry(catalog)
        yield registry
        await registry.close()


class Swappable:
    """An ASGI app that is whichever app `current` is now: an agent whose card changes."""

    def __init__(self, current: Any) -> None:
        self.current = current

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.current(scope, receive, send)


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def card_document(card: AgentCard) -> Json:
    document: Json = card.model_dump(mode="json", by_alias=True, exclude_none=True)
    return document


# name, description, skills as (id, name, description, tags), provider, binding, scheme
FIFTY: list[tuple[str, str, list[tuple[str, str, str, list[str]]], str, str, str | None]] = [
    ("Currency Converter", "Converts amounts between currencies at current exchange rates.",
     [("convert", "Convert currency", "Converts money from one currency to another.",
       ["currency", "finance", "exchange rates"])], "Acme Finance", "JSONRPC", None),
    ("Stock Quotes", "Latest stock prices and market data from the exchange.",
     [("quote", "Quote a stock", "Tells the last price of a share.", ["stocks", "finance"])],
     "Acme Finance", "HTTP+JSON", "apiKey"),
    ("Translator", "Translates text between languages, French, English, German and more.",
     [("translate", "Translate text", "Translates a text into another language.",
       ["translation", "language"])], "Lingo", "JSONRPC", None),
    ("Grammar Checker", "Finds spelling and grammar mistakes in English text.",
     [("check", "Check grammar", "Corrects grammar.", ["language", "writing"])],
     "Lingo", "JSONRPC", None),
    ("Weather", "Weather forecasts for any city: today, tomorrow and the week ahead.",
     [("forecast", "Forecast", "The forecast of temperature, rain and wind.",
       ["weather", "forecast"])], "Skyward", "HTTP+JSON", None),
    ("Air Quality", "Pollution and air quality index of a city.",
     [("aqi", "Air quality", "Air quality now.", ["environment", "health"])],
     "Skyward", "JSONRPC", None),
    ("Flight Booker", "Books flights: searches fares and reserves seats on airlines.",
     [("book_flight", "Book a flight", "Finds and books a flight.", ["travel", "flights"])],
     "TripCo", "JSONRPC", "oauth2"),
    ("Hotel Booker", "Books hotel rooms in any city.",
     [("book_hotel", "Book a hotel", "Reserves a room.", ["travel", "hotels"])],
     "TripCo", "JSONRPC", "oauth2"),
    ("Travel Planner", "Plans trips: itineraries, sights and budgets.",
     [("plan", "Plan a trip", "Makes an itinerary.", ["travel", "planning"])],
     "TripCo", "HTTP+JSON", None),
    ("Document Summarizer", "Summarizes long documents, PDF files and reports into key points.",
     [("summarize", "Summarize", "Summarizes a PDF or a text document.",
       ["documents", "summaries", "pdf"])], "Papertrail", "JSONRPC", None),
    ("PDF Converter", "Converts Word and HTML files to PDF.",
     [("to_pdf", "Convert to PDF", "Makes a PDF file.", ["documents", "files"])],
     "Papertrail", "JSONRPC", None),
    ("Image Painter", "Draws pictures and illustrations from a description.",
     [("draw", "Draw a picture", "Paints an image of what you describe.",
       ["images", "drawing", "art"])], "Pixel Works", "JSONRPC", None),
    ("Photo Editor", "Crops, resizes and retouches photos.",
     [("edit", "Edit a photo", "Edits an image.", ["images", "photos"])],
     "Pixel Works", "HTTP+JSON", None),
    ("Expense Reimbursement", "Reimburses employee expenses: receipts, amounts and approvals.",
     [("reimburse", "Reimburse an expense", "Files an expense for reimbursement.",
       ["expenses", "finance", "forms"])], "Backoffice", "JSONRPC", "bearer"),
    ("Payroll", "Runs payroll and pays salaries.",
     [("payroll", "Run payroll", "Pays employees.", ["finance", "hr"])],
     "Backoffice", "JSONRPC", "bearer"),
    ("Movie Catalog", "Finds movies by title, actor or director, with plots and ratings.",
     [("movies", "Find movies", "Searches films by director, actor or year.",
       ["movies", "films", "cinema"])], "Reelz", "JSONRPC", None),
    ("Music Recommender", "Recommends songs and albums you may like.",
     [("recommend", "Recommend music", "Suggests songs.", ["music", "recommendations"])],
     "Reelz", "JSONRPC", None),
    ("Code Reviewer", "Reviews Python and JavaScript code: bugs, style and security.",
     [("review", "Review code", "Reviews a pull request or a code snippet.",
       ["code", "python", "review"])], "DevTools", "GRPC", None),
    ("Test Writer", "Writes unit tests for your functions.",
     [("tests", "Write tests", "Writes tests.", ["code", "testing"])],
     "DevTools", "GRPC", None),
    ("Calendar Scheduler", "Schedules meetings on your calendar and finds free slots.",
     [("schedule", "Schedule a meeting", "Books a meeting with attendees in the calendar.",
       ["calendar", "meetings", "scheduling"])], "OfficeMate", "JSONRPC", "oauth2"),
    ("Email Assistant", "Drafts and sorts email.",
     [("email", "Draft email", "Writes an email reply.", ["email", "writing"])],
     "OfficeMate", "JSONRPC", "oauth2"),
    ("Recipe Finder", "Finds recipes by ingredient and cuisine.",
     [("recipes", "Find recipes", "Suggests dishes to cook.", ["food", "cooking"])],
     "Kitchenette", "JSONRPC", None),
    ("Nutrition Coach", "Counts calories and plans healthy meals.",
     [("nutrition", "Plan meals", "Healthy meal plans.", ["food", "health"])],
     "Kitchenette", "JSONRPC", None),
    ("Fitness Trainer", "Workout plans and exercise tips.",
     [("workout", "Plan a workout", "Makes a training plan.", ["fitness", "health"])],
     "Gymbo", "JSONRPC", None),
    ("Sleep Tracker", "Analyses your sleep.", [("sleep", "Sleep report", "Sleep analysis.",
     ["health", "sleep"])], "Gymbo", "JSONRPC", None),
    ("Legal Advisor", "Answers questions about contracts and law.",
     [("contracts", "Review a contract", "Explains clauses.", ["legal", "contracts"])],
     "LawBot", "JSONRPC", "bearer"),
    ("Tax Helper", "Prepares tax returns and explains deductions.",
     [("taxes", "Prepare taxes", "Fills in a tax return.", ["finance", "taxes"])],
     "LawBot", "JSONRPC", "bearer"),
    ("Math Tutor", "Solves equations and explains math step by step.",
     [("solve", "Solve math", "Solves algebra and calculus problems.", ["math", "education"])],
     "Edu", "JSONRPC", None),
    ("History Tutor", "Teaches history: dates, wars and empires.",
     [("history", "Explain history", "History lessons.", ["history", "education"])],
     "Edu", "JSONRPC", None),
    ("Quiz Master", "Makes quizzes on any topic.", [("quiz", "Make a quiz", "Quiz questions.",
     ["education", "games"])], "Edu", "JSONRPC", None),
    ("Chess Coach", "Plays chess and analyses games.", [("chess", "Play chess", "Chess moves.",
     ["games", "chess"])], "Gamers", "JSONRPC", None),
    ("Trivia Bot", "Trivia questions and fun facts.", [("trivia", "Trivia", "Fun facts.",
     ["games", "trivia"])], "Gamers", "JSONRPC", None),
    ("News Digest", "Today's headlines, summarized by topic.",
     [("news", "Headlines", "Top news stories.", ["news", "summaries"])],
     "Daily", "HTTP+JSON", None),
    ("Sports Scores", "Live scores of football, basketball and tennis.",
     [("scores", "Live scores", "Match results.", ["sports", "news"])],
     "Daily", "HTTP+JSON", None),
    ("Shipping Tracker", "Tracks parcels and deliveries.",
     [("track", "Track a parcel", "Where a package is.", ["shipping", "logistics"])],
     "Parcelly", "JSONRPC", None),
    ("Inventory Manager", "Keeps stock levels of a warehouse.",
     [("inventory", "Check inventory", "Stock counts.", ["logistics", "warehouse"])],
     "Parcelly", "JSONRPC", "apiKey"),
    ("Customer Support", "Answers customer questions and opens support cases.",
     [("support", "Help a customer", "Support answers.", ["support", "helpdesk"])],
     "HelpDeskCo", "JSONRPC", None),
    ("Survey Builder", "Builds surveys and forms and collects answers.",
     [("survey", "Build a survey", "Questionnaires.", ["forms", "surveys"])],
     "HelpDeskCo", "JSONRPC", None),
    ("Real Estate", "Finds houses and apartments to rent or buy.",
     [("homes", "Find a home", "Property listings.", ["housing", "real estate"])],
     "Homely", "JSONRPC", None),
    ("Mortgage Calculator", "Computes mortgage payments and interest.",
     [("mortgage", "Mortgage payments", "Monthly payments.", ["finance", "housing"])],
     "Homely", "JSONRPC", None),
    ("Car Rental", "Rents cars at airports and in cities.",
     [("rent_car", "Rent a car", "Car hire.", ["travel", "cars"])], "TripCo", "JSONRPC", None),
    ("Parking Finder", "Finds parking spaces nearby.", [("parking", "Find parking",
     "Parking spots.", ["cars", "maps"])], "Mapster", "JSONRPC", None),
    ("Maps and Directions", "Directions, routes and travel times.",
     [("route", "Get directions", "Driving and walking routes.", ["maps", "navigation"])],
     "Mapster", "HTTP+JSON", None),
    ("Password Vault", "Stores secrets and passwords safely.",
     [("vault", "Keep a secret", "Secret storage.", ["security", "secrets"])],
     "SafeHouse", "JSONRPC", "mutualTLS"),
    ("Security Scanner", "Scans websites for vulnerabilities.",
     [("scan", "Scan a site", "Finds vulnerabilities.", ["security", "web"])],
     "SafeHouse", "GRPC", "bearer"),
    ("SQL Assistant", "Writes and explains SQL queries for your database.",
     [("sql", "Write SQL", "Database queries.", ["data", "databases"])],
     "DataWorks", "JSONRPC", None),
    ("Chart Maker", "Turns tables of data into charts.",
     [("chart", "Make a chart", "Bar and line charts.", ["data", "visualization"])],
     "DataWorks", "JSONRPC", None),
    ("Spreadsheet Helper", "Formulas and pivot tables for spreadsheets.",
     [("spreadsheet", "Spreadsheet formulas", "Excel help.", ["data", "office"])],
     "OfficeMate", "JSONRPC", None),
    ("Gardening Guide", "When to plant, water and prune.",
     [("garden", "Garden advice", "Plant care.", ["gardening", "plants"])],
     "GreenThumb", "JSONRPC", None),
    ("Pet Care", "Advice on feeding and training dogs and cats.",
     [("pets", "Pet advice", "Dogs and cats.", ["pets", "animals"])], "GreenThumb", "JSONRPC",
     None),
]  # fmt: skip

RANKING = {
    "an agent that converts currencies": "Currency Converter",
    "translate French to English": "Translator",
    "weather forecast for tomorrow": "Weather",
    "book a flight": "Flight Booker",
    "summarize a PDF document": "Document Summarizer",
    "draw a picture of a cat": "Image Painter",
    "reimburse my expenses": "Expense Reimbursement",
    "movies by a director": "Movie Catalog",
    "review my python code": "Code Reviewer",
    "schedule a meeting on my calendar": "Calendar Scheduler",
}
"""Ten queries and the agent each should find first."""


def fifty_cards() -> list[AgentCard]:
    """The 50 cards of FIFTY."""
    from pydantic import TypeAdapter

    from accord.types import (
        AgentCapabilities,
        AgentInterface,
        AgentProvider,
        AgentSkill,
        SecurityScheme,
    )

    schemes = {
        "apiKey": {"type": "apiKey", "name": "X-API-Key", "in": "header"},
        "bearer": {"type": "http", "scheme": "bearer"},
        "oauth2": {"type": "oauth2", "flows": {}},
        "mutualTLS": {"type": "mutualTLS"},
    }
    cards = []
    for index, (name, description, skills, provider, binding, scheme) in enumerate(FIFTY):
        url = f"https://agents.example/{index}/"
        declared = (
            {scheme: TypeAdapter(SecurityScheme).validate_python(schemes[scheme])}
            if scheme
            else None
        )
        cards.append(
            AgentCard(
                name=name,
                description=description,
                url=url,
                version="1.0.0",
                protocol_version="0.3.0",
                preferred_transport=binding,
                additional_interfaces=[AgentInterface(url=url, transport=binding)],
                capabilities=AgentCapabilities(streaming=True),
                default_input_modes=["text/plain"],
                default_output_modes=["text/plain", "application/json"],
                skills=[AgentSkill(id=i, name=n, description=d, tags=t) for i, n, d, t in skills],
                provider=AgentProvider(organization=provider, url="https://example.com"),
                security_schemes=declared,
                security=[{scheme: []}] if scheme else None,
            )
        )
    return cards


async def keep_cards(catalog: CardCatalog, cards: list[AgentCard]) -> None:
    """Record `cards` in `catalog` as added, each under its own card URL."""
    for card in cards:
        record = AgentRecord(card.url + ".well-known/agent-card.json", card_document(card))
        await catalog.record(record, card, "added", "")


def with_a_skill(agent: accord.Agent) -> accord.Agent:
    """`agent` with one more skill on its card (the same executor)."""
    card = agent.card("")
    skill = AgentSkill(
        id="historic_rates",
        name="Historic rates",
        description="Tells yesterday's exchange rate between two currencies.",
        tags=["currency", "history"],
    )
    return accord.Agent(
        agent.executor,
        name=card.name,
        description=card.description,
        skills=[*card.skills, skill],
        input_modes=card.default_input_modes,
        output_modes=card.default_output_modes,
    )
