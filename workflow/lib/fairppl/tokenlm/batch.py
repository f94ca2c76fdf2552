"""Many units per LM call: drivers for estimators written as generators of LM requests.

An estimator step (:func:`fairppl.marginal.lm_guided.lm_guided_steps`,
:func:`fairppl.marginal.api.estimate_steps`) does not call the LM itself; it yields what it needs
and gets the answer back:

* :class:`Keep` ``(prefixes)``: the prefixes whose key/values an incremental session
  (:class:`.kv_tree.KVTree`) must keep from now on (the others may go); answered with None;
* :class:`Next` ``(prefixes, conts_per_prefix)``: ``logp_next_many``'s arrays, one per prefix;
* :class:`Logp` ``(seqs)``: ``logp``'s array (log P(seq [+ end] | start), nats).

The generator's return value is the unit's result. :func:`run_alone` answers one unit's requests
at once with its own session: the same LM calls in the same order as an estimator calling the LM
itself, so one unit's numbers are those of the one-unit path bit for bit.
:func:`run_many` advances several units together: each round it gathers the pending request of
every unit in flight, answers all :class:`Next` requests with one ``logp_next_many`` of one shared
session (forward passes of at most ``pass_tokens`` new positions) and all :class:`Logp` requests
with one ``logp``, and admits the next unit while the tokens asked in the round are below
``admit_tokens`` (by default ``pass_tokens``). Every unit keeps its own generator, rng and order of
draws, so its samples and log-weights are those of the one-unit path up to the LM's rounding (exact
in float64; in float32 a position's log-probability may move in its last bits with the other
positions of its forward pass). Results come back in input order, each as soon as it and every unit
before it are done.

Work per unit (:class:`Meter`): alone, the LM's counters and the clock over the unit's run; in
:func:`run_many` the unit's own time (between its requests) plus, of every round it takes part
in, a share of the calls, positions and seconds in proportion to the tokens it asked for (a
:class:`Next`: its continuations' tokens; :class:`Logp`: its sequences' tokens plus one), so
that the units' shares add up to the run's totals.
"""

from __future__ import annotations

import time
from typing import Callable, Iterable, Iterator, NamedTuple, Sequence

from .interface import Seq, TokenLM

#: New positions per forward pass by default in :func:`run_many` (a CPU thread: positions per
#: pass past which a pass costs in proportion to its positions; a GPU wants 8192 or more).
PASS_TOKENS = 1024


class Keep(NamedTuple):
    """The request: keep the key/values of ``prefixes`` from now on (answered with None)."""

    prefixes: Sequence[Seq]


class Next(NamedTuple):
    """The request: ``logp_next_many(prefixes, conts_per_prefix)``, one array per prefix."""

    prefixes: Sequence[Seq]
    conts_per_prefix: Sequence[Sequence[Seq]]


class Logp(NamedTuple):
    """The request: ``logp(seqs)``, log P(seq [+ end] | start) per sequence."""

    seqs: Sequence[Seq]


def _unknown(request) -> ValueError:
    return ValueError(f"unknown LM request {request!r:.80}: expected a Keep, Next or Logp of "
                      f"fairppl.tokenlm.batch")


class Meter:
    """The LM work and wall time of one unit run alone: ``start()`` marks, ``since(mark)`` gives
    ``(calls, positions, seconds)`` since the mark (the LM's counters and the clock)."""

    def __init__(self, lm):
        self.lm = lm

    def start(self):
        return (self.lm.calls, self.lm.positions, time.perf_counter())

    def since(self, mark) -> tuple[int, int, float]:
        calls, positions, t0 = mark
        return (self.lm.calls - calls, self.lm.positions - positions, time.perf_counter() - t0)


class UnitMeter:
    """The share of one unit in :func:`run_many` (module docstring): calls and positions of the
    rounds it took part in (fractions, rounded when read), its own seconds and its share of the
    rounds' seconds; ``since`` also counts the current stretch of its own work."""

    def __init__(self):
        self.calls = 0.0
        self.positions = 0.0
        self.seconds = 0.0
        self.resumed: float | None = None

    def _now(self) -> float:
        return self.seconds + (time.perf_counter() - self.resumed
                               if self.resumed is not None else 0.0)

    def start(self):
        return (self.calls, self.positions, self._now())

    def since(self, mark) -> tuple[int, int, float]:
        calls, positions, seconds = mark
        return (round(self.calls - calls), round(self.positions - positions),
                self._now() - seconds)


def run_alone(steps, lm: TokenLM):
    """Drive one estimator generator (module docstring) to its result with ``lm`` (and a fresh
    ``lm.session()``, opened at the first request for it; an LM whose ``session()`` is None
    answers the requests itself)."""
    session, opened = None, False
    reply = None
    while True:
        try:
            request = steps.send(reply)
        except StopIteration as stop:
            return stop.value
        reply = None
        if isinstance(request, (Keep, Next)) and not opened:
            session, opened = lm.session(), True
        if isinstance(request, Keep):
            if session is not None:
                session.keep(request.prefixes)
        elif isinstance(request, Next):
            reply = (session if session is not None else lm).logp_next_many(
                request.prefixes, request.conts_per_prefix)
        elif isinstance(request, Logp):
            reply = lm.logp(request.seqs)
        else:
            raise _unknown(request)


class UnitFailed(Exception):
    """A unit of :func:`run_many` raised ``error``; ``index`` is its place in the input."""

    def __init__(self, index: int, error: BaseException):
        super().__init__(f"unit {index}: {error}")
        self.index = index
        self.error = error


class _Unit:
    def __init__(self, lm, index: int, steps, meter: UnitMeter):
        self.lm = lm
        self.index = index
        self.steps = steps
        self.meter = meter
        self.keep: Sequence[Seq] = []
        self.request: Next | Logp | None = None
        self._weight: int | None = None
        self.result = None
        self.done = False

    def advance(self, reply) -> None:
        """Run the unit to its next :class:`Next` or :class:`Logp` request (or its end), noting
        its keep set and timing its own work (and counting the LM calls it makes itself, if any)."""
        self.meter.resumed = time.perf_counter()
        calls0, pos0 = self.lm.calls, self.lm.positions
        try:
            while True:
                try:
                    request = self.steps.send(reply)
                except StopIteration as stop:
                    self.result, self.done, self.request = stop.value, True, None
                    return
                except Exception as err:  # noqa: BLE001 - re-raised with the unit's index
                    raise UnitFailed(self.index, err) from err
                reply = None
                if isinstance(request, Keep):
                    self.keep = request.prefixes
                elif isinstance(request, (Next, Logp)):
                    self.request, self._weight = request, None
                    return
                else:
                    raise UnitFailed(self.index, _unknown(request))
        finally:
            self.meter.seconds += time.perf_counter() - self.meter.resumed
            self.meter.resumed = None
            self.meter.calls += self.lm.calls - calls0
            self.meter.positions += self.lm.positions - pos0

    @property
    def weight(self) -> int:
        """Positions the pending request needs at most, about (the budget's and the shares'
        unit): per distinct prefix its last token and the inner nodes of its continuations'
        trie (candidates sharing leading tokens share them), or every token of the sequences
        to score plus the start (:class:`Logp`). Positions already stored or shared with other
        units' requests make the real count smaller."""
        if self.request is None:
            return 0
        if self._weight is None:  # once per request
            if isinstance(self.request, Logp):
                self._weight = sum(len(s) + 1 for s in self.request.seqs)
            else:
                inner: dict[tuple, set] = {}
                for p, conts in zip(self.request.prefixes, self.request.conts_per_prefix):
                    nodes = inner.setdefault(tuple(p), set())
                    nodes.update(tuple(c[:i]) for c in conts for i in range(1, len(c)))
                self._weight = sum(1 + len(nodes) for nodes in inner.values())
        return self._weight


def run_many(lm: TokenLM, starts: Iterable[Callable[[UnitMeter], object]], *,
             pass_tokens: int = PASS_TOKENS, admit_tokens: int | None = None,
             stats: dict | None = None, lanes: int = 1) -> Iterator[tuple[int, object]]:
    """Yield ``(index, result)`` for every estimator generator ``starts[index](meter)`` makes,
    in input order, advancing the units in flight together (module docstring). ``starts``:
    callables that take the unit's :class:`UnitMeter` and return its generator (called when the
    unit is admitted). ``pass_tokens``: new positions per forward pass of the shared session;
    ``admit_tokens``: the admission budget, another unit is admitted while the pending
    requests of the units in flight weigh less (:attr:`_Unit.weight`; None: ``pass_tokens``).
    ``stats``: a dict that gets ``rounds`` (request rounds), ``requests``
    (units' requests answered) and ``unit_calls`` (over the LM calls of the rounds, the units
    each call carried, summed; over the calls: the batching factor, units per LM call).
    ``lanes``: more than 1 deals the units out to that many lanes (unit i to lane i mod lanes),
    each advancing its own units with its own session in a thread of its own (on a GPU, on a
    stream of its own), so that the host prepares one lane's pass while the device runs
    another's (:func:`_run_lanes`). Raises :class:`UnitFailed` naming the unit whose step or LM
    request failed."""
    if int(pass_tokens) < 1:
        raise ValueError(f"pass_tokens must be at least 1 (new positions per forward pass), "
                         f"got {pass_tokens}")
    admit_tokens = int(pass_tokens if admit_tokens is None else admit_tokens)
    if admit_tokens < 1:
        raise ValueError(f"admit_tokens must be at least 1 (tokens of pending requests), got "
                         f"{admit_tokens}")
    if int(lanes) < 1:
        raise ValueError(f"lanes must be at least 1, got {lanes}")
    if int(lanes) > 1:
        yield from _run_lanes(lm, list(starts), int(pass_tokens), admit_tokens, stats,
                              int(lanes))
        return
    session = lm.session(int(pass_tokens))
    pending = iter(enumerate(starts))
    active: dict[int, _Unit] = {}
    finished: dict[int, object] = {}
    emitted = 0
    exhausted = False
    while active or not exhausted:
        load = sum(u.weight for u in active.values())
        while not exhausted and (not active or load < admit_tokens):
            try:
                index, start = next(pending)
            except StopIteration:
                exhausted = True
                break
            meter = UnitMeter()
            try:
                unit = _Unit(lm, index, start(meter), meter)
            except Exception as err:  # noqa: BLE001 - re-raised with the unit's index
                raise UnitFailed(index, err) from err
            unit.advance(None)
            if unit.done:
                finished[index] = unit.result
            else:
                active[index] = unit
                load += unit.weight
        while emitted in finished:
            yield emitted, finished.pop(emitted)
            emitted += 1
        if active:
            served = _round(lm, session, list(active.values()))
            if stats is not None:
                stats["rounds"] = stats.get("rounds", 0) + 1
                stats["requests"] = stats.get("requests", 0) + len(active)
                stats["unit_calls"] = stats.get("unit_calls", 0) + served
            for index in [i for i, u in active.items() if u.done]:
                finished[index] = active.pop(index).result
    while emitted in finished:
        yield emitted, finished.pop(emitted)
        emitted += 1


_DONE = object()  # a lane's last message


def _run_lanes(lm, starts: list, pass_tokens: int, admit_tokens: int, stats: dict | None,
               lanes: int) -> Iterator[tuple[int, object]]:
    """:func:`run_many` over ``lanes`` lanes: lane j runs units j, j + lanes, ... with a
    shallow copy of ``lm`` (its own call and position counters, added to ``lm``'s when the lane
    ends; the model is shared) in a thread, on a CUDA stream of its own when the model is on
    a GPU. A lane's units share only that lane's passes, so which units share a pass does not
    depend on the threads' timing. Results are yielded in input order; the first failure stops
    every lane (at its next unit) and is raised with the unit's input index. A unit's seconds
    are shares of its own lane's time: the lanes run at once, so over all units they add up to
    about ``lanes`` times the wall time (its calls and positions add up exactly)."""
    import contextlib
    import copy
    import queue
    import threading

    out: queue.Queue = queue.Queue()
    stop = threading.Event()
    lane_lms, lane_stats = [], []
    for _ in range(lanes):
        own = copy.copy(lm)
        own.calls, own.positions = 0, 0
        lane_lms.append(own)
        lane_stats.append({} if stats is not None else None)
    device = lm.device

    def work(j: int) -> None:
        own = lane_lms[j]
        try:
            if device is not None and device.type == "cuda":
                import torch

                where = torch.cuda.stream(torch.cuda.Stream(device))
            else:
                where = contextlib.nullcontext()
            with where:
                for k, result in run_many(own, starts[j::lanes], pass_tokens=pass_tokens,
                                          admit_tokens=admit_tokens, stats=lane_stats[j]):
                    if stop.is_set():
                        return
                    out.put((k * lanes + j, result))
        except UnitFailed as failed:
            out.put((None, UnitFailed(failed.index * lanes + j, failed.error)))
        except BaseException as err:  # noqa: BLE001 - raised by the caller's thread
            out.put((None, err))
        finally:
            out.put((j, _DONE))

    threads = [threading.Thread(target=work, args=(j,), daemon=True,
                                name=f"fairppl-lane-{j}") for j in range(min(lanes,
                                                                             len(starts)))]
    for t in threads:
        t.start()
    done: dict[int, object] = {}
    emitted, running = 0, len(threads)
    try:
        while running:
            index, result = out.get()
            if result is _DONE:  # index: the lane
                lm.calls += lane_lms[index].calls
                lm.positions += lane_lms[index].positions
                running -= 1
            elif index is None:
                raise result
            else:
                done[index] = result
            while emitted in done:
                yield emitted, done.pop(emitted)
                emitted += 1
    finally:
        stop.set()
        for t in threads:
            t.join()
        if stats is not None:
            for part in lane_stats:
                for key, value in part.items():
                    stats[key] = stats.get(key, 0) + value


def _round(lm, session, units: list[_Unit]) -> int:
    """Answer the pending request of every unit of ``units`` with one ``logp_next_many`` and one
    ``logp``, share the work out and advance each unit. Returns the units carried per LM call,
    summed over the round's calls."""
    nexts = [u for u in units if isinstance(u.request, Next)]
    logps = [u for u in units if isinstance(u.request, Logp)]
    weights = {u.index: u.weight for u in units}
    replies: dict[int, object] = {}
    calls0, pos0, t0 = lm.calls, lm.positions, time.perf_counter()
    served = 0
    if nexts:
        def score_next():
            if session is not None:
                session.keep([p for u in nexts for p in u.keep])
            return (session if session is not None else lm).logp_next_many(
                [p for u in nexts for p in u.request.prefixes],
                [c for u in nexts for c in u.request.conts_per_prefix])

        served += _answer(lm, nexts, score_next, replies)
    if logps:
        served += _answer(lm, logps, lambda: lm.logp([s for u in logps for s in u.request.seqs]),
                          replies)
    calls, positions = lm.calls - calls0, lm.positions - pos0
    seconds = time.perf_counter() - t0
    total = sum(weights.values())
    for u in units:
        share = weights[u.index] / total
        u.meter.calls += calls * share
        u.meter.positions += positions * share
        u.meter.seconds += seconds * share
    for u in units:
        u.advance(replies[u.index])
    return served


def _answer(lm, units: list[_Unit], score: Callable[[], Sequence], replies: dict) -> int:
    """Run ``score()`` (one LM request of all ``units``, whose requests are all :class:`Next` or
    all :class:`Logp`), put each unit's slice of its answers (one per prefix or sequence it asked
    for) in ``replies``, and return the units carried times the LM calls it took."""
    calls0 = lm.calls
    try:
        out = score()
    except Exception as err:  # noqa: BLE001 - named by the unit whose request fails
        _blame(lm, units, err)
    at = 0
    for u in units:
        asked = len(u.request.prefixes if isinstance(u.request, Next) else u.request.seqs)
        replies[u.index] = out[at:at + asked]
        at += asked
    return len(units) * (lm.calls - calls0)


def _blame(lm, units: list[_Unit], err: Exception):
    """Raise :class:`UnitFailed` for the first unit of ``units`` whose request alone fails (each
    is run again on the LM without a session), else for the first unit with ``err``."""
    for u in units if len(units) > 1 else ():
        try:
            if isinstance(u.request, Next):
                lm.logp_next_many(u.request.prefixes, u.request.conts_per_prefix)
            else:
                lm.logp(u.request.seqs)
        except Exception as own:  # noqa: BLE001
            raise UnitFailed(u.index, own) from own
    raise UnitFailed(units[0].index, err) from err
