"""Draws docs/benchmarks.png from the results JSON; runs in the bench venv, which has matplotlib."""

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

COLORS = {"accord": "#2b6cb0", "a2a-sdk": "#dd6b20", "floor": "#718096"}


def pick(rows, key, **match):
    """`key` of the first successful row matching `match`, or None."""
    for row in rows:
        if row.get("status", "ok") == "ok" and all(row.get(k) == v for k, v in match.items()):
            return row[key]
    return None


def bars(ax, groups, series, title, ylabel):
    """Grouped bars: `series` maps a label to one value (or None) per group."""
    width = 0.8 / len(series)
    for i, (label, values) in enumerate(series.items()):
        xs = [g + i * width for g in range(len(groups))]
        alpha = 0.55 if "message" in label else 1.0
        color = COLORS[label.split()[0]]
        ax.bar(xs, [v or 0 for v in values], width, label=label, color=color, alpha=alpha)
    ax.set_xticks([g + width * (len(series) - 1) / 2 for g in range(len(groups))], groups)
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7)


def send_panel(ax, rows):
    groups = [(v, c) for v in ("0.3", "1.0") for c in (1, 50)]
    servers = ("accord (task)", "accord (message)", "a2a-sdk (task)", "a2a-sdk (message)")
    series = {
        s: [pick(rows, "rps", server=s, version=v, connections=c) for v, c in groups]
        for s in (*servers, "floor (bare ASGI)")
    }
    labels = [f"{v}, {c} conn" for v, c in groups]
    bars(ax, labels, series, "message/send (no bar: not served)", "requests/s (log)")
    ax.set_yscale("log")


def streaming_panel(ax, rows):
    chunks = sorted({r["chunks"] for r in rows})
    for server in ("accord", "a2a-sdk"):
        for subscribers, style in ((1, "-o"), (10, "--s")):
            match = {"server": server, "subscribers": subscribers}
            points = [(c, pick(rows, "cpu_us_per_event", chunks=c, **match)) for c in chunks]
            xs = [c for c, y in points if y is not None]
            ys = [y for _, y in points if y is not None]
            label = f"{server}, {subscribers} subscriber(s)"
            ax.plot(xs, ys, style, color=COLORS[server], label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_title("streaming: server CPU per delivered event")
    ax.set_xlabel("artifact chunks in the task")
    ax.set_ylabel("µs per event (log)")
    ax.legend(fontsize=7)


def memory_panel(ax, rows):
    counts = sorted({r["streams"] for r in rows})
    servers = ("accord", "a2a-sdk")
    series = {s: [pick(rows, "rss_mib", server=s, streams=n) for n in counts] for s in servers}
    ax.axhline(1024, color="red", linewidth=0.8, linestyle=":", label="1 GiB target")
    bars(ax, [f"{n:,} streams" for n in counts], series, "idle SSE streams: server RSS", "MiB")


def store_panel(ax, rows):
    names = [r["store"] for r in rows]
    ax.bar(names, [r.get("tasks_per_s", 0) for r in rows], color=COLORS["accord"])
    for i, row in enumerate(rows):
        if "tasks_per_s" not in row:
            ax.text(i, 0, "n/a", ha="center", va="bottom")
    ax.set_title("accord stores: completed tasks/s (in-process)")
    ax.set_ylabel("tasks/s")


def main(results_path, chart_path):
    with open(results_path) as file:
        results = json.load(file)
    fig, axes = plt.subplots(2, 2, figsize=(13, 9))
    send_panel(axes[0][0], results["send"])
    streaming_panel(axes[0][1], results["streaming"])
    memory_panel(axes[1][0], results["memory"])
    store_panel(axes[1][1], results["store"])
    fig.suptitle(f"accord vs a2a-sdk 1.3.0 vs bare ASGI, {results['date']}")
    fig.tight_layout()
    fig.savefig(chart_path, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
