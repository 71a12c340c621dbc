"""The independent checker's phases: a move's puts, draws and finish, its effects and lost
turns, reshuffles, and the round and game ends (docs/rules.md R4 to R9)."""

from __future__ import annotations

from collections import Counter, deque

from .state import SUITS, Event, GameState, _Abort, _fmt_cards, _rank, _suit


class GameCheck(GameState):
    """One game's full check: :class:`.state.GameState` plus the phase handlers it dispatches to."""

    def in_move(self, ln: int, kind: str, ev: Event) -> None:
        if kind == "reshuffle":
            self.on_reshuffle(ln, ev)
            return
        if kind not in ("put", "draw", "finish"):
            self.fatal(ln, "R4", f"seat {self.mover} is moving: a {kind} line cannot come now")
        seat = self.seat(ln, ev.get("seat"))
        if seat != self.mover:
            self.fatal(ln, "R2.1", f"seat {seat} acts ({kind}) but it is seat {self.mover}'s move")
        getattr(self, f"on_{kind}")(ln, ev)

    def on_put(self, ln: int, ev: Event) -> None:
        if ev.get("opening"):
            self.fatal(ln, "R3.3", "only the round's opening card is marked opening")
        card = self.card(ln, ev.get("card"))
        hand = self.hands[self.mover]
        if card not in hand:
            self.fatal(ln, "R4", f"seat {self.mover} puts {card}, which is not in their hand")
        if not self.put:
            if not self.matches(card):
                self.fatal(
                    ln,
                    "R4.2",
                    f"first card {card} does not match top {self.top} "
                    f"(suit to follow {self.follow}, rank {_rank(self.top)}, or a jack)",
                )
        elif _rank(self.put[-1]) == "6":
            if not self.matches(card):
                self.fatal(ln, "R5.2", f"{card} does not cover the six {self.top} (its suit, a six or a jack)")
        elif _rank(card) != _rank(self.put[-1]):
            self.fatal(ln, "R4.3", f"after {self.put[-1]} only rank {_rank(self.put[-1])} may follow, not {card}")
        if _rank(card) == "j":
            suit = ev.get("suit")
            if suit not in SUITS:
                self.fatal(ln, "R6.4", f"jack {card} must order one of s, c, h, d, not {suit!r}")
            self.follow = suit
        else:
            if ev.get("suit") is not None:
                self.err(ln, "R6.4", f"only a jack orders a suit; {card} has suit {ev.get('suit')!r}")
            self.follow = _suit(card)
        hand.remove(card)
        self.pile.append(card)
        self.put.append(card)

    def on_draw(self, ln: int, ev: Event) -> None:
        card = self.card(ln, ev.get("card"))
        if self.put and _rank(self.put[-1]) == "6":
            if self.has_cover():
                self.fatal(ln, "R5.3", f"seat {self.mover} draws while holding a card that covers the six {self.top}")
        elif self.put:
            self.fatal(
                ln,
                "R4.4",
                f"seat {self.mover} draws after putting a card in this move"
                + (" (the opening card counts as put, R3.3)" if len(self.put) == 1 and self.moves == 0 else ""),
            )
        elif self.drew:
            self.fatal(ln, "R4.4", f"seat {self.mover} draws a second time in one move")
        if not self.can_draw():
            self.fatal(ln, "R7.2", f"seat {self.mover} draws but no card can be drawn")
        self.take(ln, card, f"seat {self.mover}")
        self.pending_reshuffle = 0
        if not self.put:
            self.drew = True
        self.hands[self.mover].append(card)

    def on_finish(self, ln: int, ev: Event) -> None:
        if self.put:
            if _rank(self.put[-1]) == "6" and (self.can_draw() or self.has_cover()):
                self.fatal(
                    ln,
                    "R5.1",
                    f"seat {self.mover} finishes with its own six {self.top} uncovered "
                    f"({'a cover is in hand' if self.has_cover() else 'a card can still be drawn'})",
                )
        elif not self.drew and self.can_draw():
            self.fatal(ln, "R4.5", f"seat {self.mover} finishes without putting or drawing a card")
        self.moves += 1
        mover, n = self.mover, self.n
        group: list[str] = []
        for c in reversed(self.put):
            if group and _rank(c) != _rank(group[0]):
                break
            group.insert(0, c)
        self.final_group = group
        self.effect_mover = mover
        self.penalties = deque()
        rank = _rank(group[-1]) if group else ""
        k = len(group)
        if rank in ("7", "8", "a"):
            if self.rules["stacked_effects"]:
                t = (mover + 1) % n
                if rank == "7":
                    self.penalties.extend([(t, "7")] * k)
                elif rank == "8":
                    self.penalties.extend([(t, "8")] * (2 * k))
                    self.skips[t] += 1
                else:
                    self.skips[t] += k
            else:
                others = [(mover + 1 + i) % n for i in range(n - 1)]
                for i in range(k):
                    t = others[i % len(others)]
                    if rank == "7":
                        self.penalties.append((t, "7"))  # R6.1
                    elif rank == "8":
                        self.penalties.extend([(t, "8")] * 2)  # R6.2
                        self.skips[t] += 1
                    else:
                        self.skips[t] += 1  # R6.3
        self.phase = "effects"

    # -- effects, skips --------------------------------------------------------
    def on_penalty(self, ln: int, ev: Event) -> None:
        seat = self.seat(ln, ev.get("seat"))
        card = self.card(ln, ev.get("card"))
        if not self.penalties:
            self.fatal(
                ln,
                "R6",
                f"penalty for seat {seat} but the move's final group "
                f"({' '.join(self.final_group) or 'nothing'}) leaves no effect draw",
            )
        target, rank = self.penalties[0]
        if seat != target:
            self.fatal(
                ln,
                "R6",
                f"effect draw for seat {seat}, but the next target is seat {target} "
                f"(final group {' '.join(self.final_group)} of seat {self.effect_mover})",
            )
        if str(ev.get("rank")) != rank:
            self.fatal(ln, "R6.5", f"effect draw marked rank {ev.get('rank')!r}, expected {rank!r}")
        self.take(ln, card, f"penalty seat {seat}")
        self.pending_reshuffle = 0
        self.penalties.popleft()
        self.hands[seat].append(card)

    def close_effects(self, ln: int) -> None:
        """The move's effect lines are over: check nothing is missing, then pass on."""
        if self.penalties:
            if self.can_draw():
                t, rank = self.penalties[0]
                self.fatal(
                    ln,
                    "R6.5",
                    f"missing effect draw ({rank}) for seat {t}: {len(self.penalties)} still due "
                    "and a card can be drawn",
                )
            self.penalties.clear()  # R7.2: they lapse
        mover = self.effect_mover
        if not self.hands[mover]:
            self.expected_winner = mover
            self.phase = "round"
        elif self.moves >= self.rules["max_moves"]:
            self.expected_winner = None
            self.phase = "round"
        else:
            n = self.n
            seat = (mover + 1) % n
            queue: deque[int] = deque()
            while self.skips[seat] > 0:
                self.skips[seat] -= 1
                queue.append(seat)
                seat = (seat + 1) % n
            self.skip_queue = queue
            self.next_mover = seat
            self.phase = "skips"

    def on_skip(self, ln: int, ev: Event) -> None:
        seat = self.seat(ln, ev.get("seat"))
        if not self.skip_queue:
            self.fatal(ln, "R6.5", f"skip for seat {seat}, but seat {self.next_mover} is to move with no lost turn")
        if seat != self.skip_queue[0]:
            self.fatal(ln, "R6.5", f"skip for seat {seat}, but seat {self.skip_queue[0]} is the next with a lost turn")
        self.skip_queue.popleft()

    def on_reshuffle(self, ln: int, ev: Event) -> None:
        if self.stock:
            self.fatal(ln, "R7.1", f"reshuffle while the stock still has {len(self.stock)} cards")
        if len(self.pile) <= 1:
            self.fatal(ln, "R7.2", "reshuffle but the pile has no card besides the top")
        new = ev.get("stock")
        if not isinstance(new, list):
            self.fatal(ln, "R7.1", "reshuffle without a stock list")
        for c in new:
            self.card(ln, c, "reshuffled card")
        want = Counter(self.pile[:-1])
        got = Counter(new)
        if got != want:
            self.fatal(
                ln,
                "R7.1",
                f"new stock is not the pile but the top: missing {_fmt_cards(want - got)}, "
                f"extra {_fmt_cards(got - want)}",
            )
        self.stock = list(new)
        self.pile = [self.pile[-1]]
        self.pending_reshuffle = ln

    # -- round and game end ---------------------------------------------------
    def in_round(self, ln: int, kind: str, ev: Event) -> None:
        if kind != "round":
            if self.expected_winner is None:
                self.fatal(ln, "R8.4", f"the round reached {self.rules['max_moves']} moves and must end; got {kind}")
            self.fatal(ln, "R8.1", f"seat {self.expected_winner} emptied their hand: the round must end; got {kind}")
        rules, n = self.rules, self.n
        problems: list[tuple[str, str]] = []
        if ev.get("round") != self.round:
            problems.append(("R8", f"round line says round {ev.get('round')!r}, expected {self.round}"))
        winner = self.expected_winner
        if ev.get("winner") != winner:
            rule = "R8.4" if winner is None or ev.get("winner") is None else "R8.1"
            problems.append((rule, f"winner should be {winner!r}, not {ev.get('winner')!r}"))
        pts = rules["points"]
        points = [sum(pts[_rank(c)] for c in h) for h in self.hands]
        raw = [self.scores[s] + points[s] for s in range(n)]
        bonus = 0
        if winner is not None and rules["jack_finish"]:
            bonus = rules["jack_finish"] * sum(1 for c in self.final_group if _rank(c) == "j")
            raw[winner] -= bonus
        burn = rules["burn"]
        burned = [s for s in range(n) if burn is not None and raw[s] == burn]
        scores = [0 if s in burned else raw[s] for s in range(n)]
        got_points = ev.get("points")
        ok_points = (
            isinstance(got_points, list)
            and len(got_points) == n
            and all(
                got_points[s] == points[s] or (bonus and s == winner and got_points[s] == points[s] - bonus)
                for s in range(n)
            )
        )
        if not ok_points:
            problems.append(("R8.2", f"points should be {points}, not {got_points!r}"))
        got_scores = ev.get("scores")
        if got_scores != scores:
            rule = "R8.2"
            if isinstance(got_scores, list) and len(got_scores) == n:
                bad = [s for s in range(n) if got_scores[s] != scores[s]]
                if any(s in burned or (burn is not None and got_scores[s] in (0, burn)) for s in bad):
                    rule = "R8.3"
            problems.append((rule, f"scores should be {scores}, not {got_scores!r}"))
        got_burned = ev.get("burned")
        if not isinstance(got_burned, list) or sorted(got_burned, key=str) != burned:
            problems.append(("R8.3", f"burned should be {burned}, not {got_burned!r}"))
        if problems:
            for rule, msg in problems:
                self.err(ln, rule, msg)
            raise _Abort
        self.scores = scores
        self.last_winner = winner
        self.over = any(s > rules["limit"] for s in scores) or self.round >= rules["max_rounds"]
        self.phase = "end" if self.over else "deal"

    def in_end(self, ln: int, kind: str, ev: Event) -> None:
        if kind != "end":
            if any(s > self.rules["limit"] for s in self.scores):
                self.fatal(ln, "R2.3", f"a score exceeds {self.rules['limit']}: the game must end, got {kind}")
            self.fatal(ln, "R2.4", f"{self.rules['max_rounds']} rounds played: the game must end, got {kind}")
        n, limit = self.n, self.rules["limit"]
        if ev.get("scores") != self.scores:
            self.err(ln, "R9.1", f"final scores should be {self.scores}, not {ev.get('scores')!r}")
        losers = {s for s in range(n) if self.scores[s] > limit}
        half = n // 2
        if self.rules["teams"]:
            losers |= {(s + half) % n for s in losers}
            key = [self.scores[s % half] + self.scores[s % half + half] for s in range(n)]
        else:
            key = list(self.scores)
        got_losers = ev.get("losers")
        if not isinstance(got_losers, list) or sorted(got_losers, key=str) != sorted(losers):
            self.err(ln, "R9.1", f"losers should be {sorted(losers)}, not {got_losers!r}")
        keys = [(s in self.retired, key[s]) for s in range(n)]
        places = [1 + sum(1 for other in keys if other < keys[s]) for s in range(n)]
        if ev.get("places") != places:
            note = f" (retired seats {sorted(self.retired)} placed last)" if self.retired else ""
            self.err(ln, "R9.1", f"places should be {places}{note}, not {ev.get('places')!r}")
        if ev.get("rounds") != self.round:
            self.err(ln, "R9.1", f"rounds should be {self.round}, not {ev.get('rounds')!r}")
        self.phase = "done"
        self.done = True

    def in_done(self, ln: int, kind: str, ev: Event) -> None:  # pragma: no cover - caller handles
        self.fatal(ln, "format", f"{kind} line after the game's end line")

    def in_effects(self, ln: int, kind: str, ev: Event) -> None:  # pragma: no cover - resolved in feed
        raise AssertionError

    in_skips = in_effects
