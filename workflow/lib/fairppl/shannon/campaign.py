"""The Shannon game as a campaign (Bimbot et al., section 4): the organiser writes truncations,
a site returns bets (or rankings) for each, and the organiser scores them without the site's model.

A campaign folder holds four files, all UTF-8:

* ``truncations.jsonl``: one ``{"id": ..., "unit_id": ..., "context": ...}`` per truncation, the
  context being the words of the unit before the position, space-joined (``""`` at the first
  word; in a campaign of unit ``char`` a position is a character and the context is the text up
  to the previous character, :mod:`.outcomes`). Ids are ``t000001``, ``t000002``, ... in file
  order: they say nothing of the answer.
* ``vocabulary.txt``: the m outcomes, one per line: the vocabulary words (most frequent first),
  then ``<unk>`` (every other word) and ``</s>`` (the end of the unit).
* ``key.jsonl``: the organiser's answer key, ``{"id": ..., "word": ...}`` per truncation in the
  same order, ``word`` the correct outcome (``<unk>`` for a word outside the vocabulary, ``</s>``
  after a unit's last word), and ``weight`` (the unit's number of truncations) in a
  length-weighted campaign.
* ``campaign.json``: the format (``fairppl-campaign/3``), the settings (corpus, language, the
  unit of the game, split, protocol, n, seed, vocabulary size, the corpus whose train split gave
  the vocabulary), the
  ``scheme`` of the draws (``exhaustive``, or for the randomized protocol ``systematic`` or
  ``weighted``: both estimate the per-word perplexity, :mod:`.truncations`) and the sizes (m,
  n_truncations, n_units).

A submission has one JSON object per line: ``{"id": ..., "bets": {"word": probability, ...}}``
(a list of l outcomes; ``{}`` bets uniformly) or ``{"id": ..., "ranking": ["word", ...]}`` (the
outcomes in decreasing order of belief, possibly cut short). :func:`read_submission` checks every
line and returns the valid records with a flag (line, id, reason) for every problem; it never
looks at the key. :func:`score_submission` scores the valid records: a bets record's correct
outcome gets its listed bet, else the floor ``(1 - A) / (m - l)`` of eq. 6 (``1/m`` for ``{}``);
the gambling perplexity (eq. 3, weighted by the key's weights in a length-weighted campaign) with
a bootstrap interval over units; a ranking file gets Shannon's entropy values (eqs. 9-12) from
the ranks of the correct outcomes, with whether they are bounds. Log bets in nats;
``bits`` in a name means base 2.

The code is split by role, each module read in one sitting: :mod:`.campaign_folder` (the four
files, written once and read back cross-checked), :mod:`.truncations` (building the truncations,
from units or from a finished study), :mod:`.submission` (the bets and rankings format and its
line-by-line validation, writing a bets file) and :mod:`.scoring` (scoring with the key). This
module gathers their public names.
"""

from .campaign_folder import (CAMPAIGN_FILES, FORMAT, KEY, PROTOCOLS, SETTING_KEYS, SETTINGS,
                              TRUNCATIONS, VOCABULARY, Campaign, jsonl_records, read_campaign,
                              read_settings, read_vocabulary, write_campaign)
from .scoring import MIN_INTERVAL_UNITS, TAILS, score_submission
from .submission import BETS, RANKING, Record, read_submission, write_bets
from .truncations import build_campaign, make_truncations, truncation_id, vocabulary_corpus

__all__ = ["BETS", "CAMPAIGN_FILES", "FORMAT", "KEY", "MIN_INTERVAL_UNITS", "PROTOCOLS",
           "RANKING", "SETTINGS", "SETTING_KEYS", "TAILS", "TRUNCATIONS", "VOCABULARY",
           "Campaign", "Record", "build_campaign", "make_truncations", "read_campaign",
           "read_settings", "read_submission", "read_vocabulary", "score_submission",
           "truncation_id", "vocabulary_corpus", "write_bets", "write_campaign"]
