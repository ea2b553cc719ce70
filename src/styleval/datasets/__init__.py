"""The public datasets styleval reads, one module each, each parsed in one place.

Nothing is bundled: every function reads the folder the caller gives (the dataset's own folder or its parent,
e.g. ``../shared/data``; ``None`` means :func:`default_root`). Modules and their views:

* :mod:`.lai2022` (GYAFC formality, Lai et al. 2022): records, human judgments and stored scores
* :mod:`.mir2019` (Yelp sentiment, Mir et al. 2019): records, human judgments and stored scores
* :mod:`.sgdd_tst` (SGDD-TST, Babakov et al.): records, the scored table
* :mod:`.pt16` (Pavlick & Tetreault 2016 formality): labelled text
* :mod:`.paradetox` (ParaDetox): labelled text, parallel groups, (toxic, rewrite) pairs, with their splits
* :mod:`.yelp_shen` (Shen et al.'s Yelp sentences): labelled text, sentences
* :mod:`.yelp_dualrl` (DualRL's Yelp test set and outputs): records
* :mod:`.gyafc` (the GYAFC release layout, Rao & Tetreault 2018): segments, records, parallel groups

Shared pieces: :mod:`.split` (the one seeded shuffle-and-cut), :mod:`.labelled` (:class:`LabelledData`),
:mod:`.parallel` (:class:`ParallelData`), :mod:`.tables` (judgment rows for :mod:`styleval.meta.datasets`).
"""
from __future__ import annotations

from . import gyafc, lai2022, mir2019, paradetox, pt16, sgdd_tst, yelp_dualrl, yelp_shen
from .gyafc import GyafcSegment, gyafc_inputs, read_gyafc
from .labelled import LabelledData, read_labelled, split_data
from .parallel import RewriteGroup, ParallelData, holdout, split_by_source
from .paths import dataset_dir, default_root
from .split import shuffled_parts
from .yelp_dualrl import records as read_yelp_dualrl
from ..readers.text import StrPath
from ..records import Record

read_lai2022_aspect = lai2022.records
read_mir2019 = mir2019.records
read_sgdd_tst = sgdd_tst.records


def read_lai2022(root: StrPath | None) -> list[Record]:
    """Lai et al. (2022) records with the content (vs source) judgments: :func:`lai2022.records` of
    ``content.src``."""
    return lai2022.records(root, "content.src")


__all__ = ["gyafc", "lai2022", "mir2019", "paradetox", "pt16", "sgdd_tst", "yelp_dualrl", "yelp_shen",
           "GyafcSegment", "gyafc_inputs", "read_gyafc", "LabelledData", "read_labelled", "split_data", "RewriteGroup",
           "ParallelData", "holdout", "split_by_source", "dataset_dir", "default_root", "shuffled_parts",
           "read_lai2022", "read_lai2022_aspect", "read_mir2019", "read_sgdd_tst", "read_yelp_dualrl"]
