"""``podsearch eval similar``: the click command (registered in cli.py); the work is in evaluation/similar.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click


def _data_dir(data: str | None) -> Path:
    if data:
        return Path(data)
    obj = click.get_current_context().find_root().obj  # the podsearch group's context, when there is one
    config = getattr(obj, "config", None)
    if config is None:
        raise click.UsageError("Give --data DIR (a data folder with the site's catalog and index).")
    return Path(config.data_dir)


def similar(pairs: str | None, tags: str | None, baselines: str, data: str | None, params_json: str | None,
            as_json: bool) -> None:
    """Measure "nearby episodes" against editor-linked pairs (recall@10, MRR@10) and topic tags (P@5).

    Also the reasons shown with our top 10s: how many per neighbour and the share that are general words
    (among the language's most common, wordfreq's list).

    Our model is fitted on the data folder's catalog with the current parameters (or --params) and
    measured beside the baselines in the same run. P@5 ranks labelled episodes only (unlabelled
    neighbours are unknown, not wrong); p@5_all counts them as misses.

    \b
    Example:
      podsearch --data /tmp/site-data eval similar \\
        --pairs ../shared/corpus/eval/related_pairs.dev.tsv --tags ../shared/corpus/eval/btc_tags.dev.tsv --json
    """
    from dataclasses import replace

    from ..errors import PodsearchError
    from ..similar import ModelParams
    from .similar import BASELINES, evaluate, read_pairs, read_tags

    if pairs is None and tags is None:
        raise click.UsageError("Give --pairs FILE and/or --tags FILE.")
    names = [b.strip() for b in baselines.split(",") if b.strip()] if baselines != "all" else list(BASELINES)
    unknown = sorted(set(names) - set(BASELINES))
    if unknown:  # (misuse, exit 2: it was a failure, exit 1)
        raise click.UsageError(f"Unknown baseline(s): {', '.join(unknown)}. Choose from {', '.join(BASELINES)}.")
    try:
        params = ModelParams()
        if params_json:
            params = replace(params, **json.loads(params_json))
        result = evaluate(_data_dir(data), read_pairs(pairs) if pairs else None, read_tags(tags) if tags else None,
                          names, params, progress=lambda name: click.echo(f"measured {name}", err=True)
                          if not as_json and sys.stderr.isatty() else None)
    except (TypeError, ValueError) as exc:
        raise click.UsageError(f"--params: {exc}") from None
    except PodsearchError as exc:
        raise click.ClickException(str(exc)) from None
    out = result.to_dict()
    out["ours_beats_every_baseline"] = result.beats_baselines()
    if as_json:
        click.echo(json.dumps(out, indent=2))
        return
    metrics = [m for m in ("recall@10", "mrr@10", "p@5", "p@5_all") if m in result.systems["ours"]]
    click.echo(f"{result.episodes} episodes")
    click.echo(f"{'system':<18}" + "".join(f"{m:>11}" for m in metrics) + f"{'seconds':>10}")
    for name, figures in result.systems.items():
        click.echo(f"{name:<18}" + "".join(f"{figures[m]:>11.4f}" for m in metrics) + f"{figures['seconds']:>10.1f}")
    ours = result.systems["ours"]
    click.echo(f"ours: {ours['reasons_per_neighbour']} reasons per neighbour, {ours['reasons_general_share']:.2%} of them "
               f"general words, {ours['neighbours_without_reasons']:.2%} of neighbours without one")
    for metric, ok in out["ours_beats_every_baseline"].items():
        click.echo(f"ours beats every baseline on {metric}: {'yes' if ok else 'NO'}")


similar_cmd = click.command("similar")(
    click.option("--pairs", type=click.Path(exists=True, dir_okay=False), default=None,
                 help="related_pairs TSV (source_guid, target_guid).")(
    click.option("--tags", type=click.Path(exists=True, dir_okay=False), default=None,
                 help="tags TSV (guid, comma-separated tags).")(
    click.option("--baselines", default="all", show_default=True,
                 help="Comma-separated: by_date, whoosh_more_like, tfidf_default, tfidf_sublinear, random; or all.")(
    click.option("--data", metavar="DIR", default=None,
                 help="Data folder with the catalog and index [default: podsearch --data].")(
    click.option("--params", "params_json", metavar="JSON", default=None,
                 help='Model parameters to try, e.g. \'{"people_weight": 3}\'.')(
    click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")(similar)))))))
