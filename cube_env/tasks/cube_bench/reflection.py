"""Test 4, reflection-guided re-answering: does one self-check repair wrong answers, or break right ones?

The items are optimal-move items (test 3, image + text).  Three questions per item: the draft
answer; a free-text reflection on it; the final answer, given the draft and the reflection.  In
the ``redacted`` regime (the default) the reflection prompt shows the draft but not whether it
was right; in ``unredacted`` it also names the correct option (the paper's oracle upper bound).
(The paper's own redacted prompt says the draft "did not solve the cube", which tells the model
it was wrong; ours does not, so a correct draft can be kept or flipped and OTR means something.)
Scored by initial and final accuracy, their difference, the error-fix rate (wrong drafts made
right) and the overthink rate (right drafts made wrong).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..items import Ask, Item, ItemResult, Prompt, ask_and_judge
from ..metrics import Proportion, reflection_metrics
from ..parsing import FreeTextForm
from .move_choice import MoveChoice

REGIMES = ("redacted", "unredacted")
REFLECT = ("\n\nYou answered: {draft}.\n{hint}Reflect on that answer: check each candidate against the cube "
           "and say whether your answer is right. Write at most 150 words; do not give a final answer yet.")
HINTS = {"redacted": "", "unredacted": "The correct option is {gold}.\n"}
FINAL = ("\n\nYour first answer was: {draft}.\nYour reflection:\n<<<\n{reflection}\n>>>\n\nNow give your final "
         "answer. Reply with exactly one line, <ANSWER> X </ANSWER>, and nothing else.")


class Reflection(MoveChoice):
    """Reflection-guided re-answering (paper §3.1, §4.3, B.4)."""

    name = "reflection"
    variants = REGIMES
    items_of = "move-choice"

    def play(self, item: Item, variant: str, ask: Ask) -> ItemResult:
        self.check_variant(variant)
        base = self.prompt(item, "image+text")
        draft = ask_and_judge(ask, base, "draft")
        exchanges = [draft]
        if draft.reply.error is None:
            shown = f"option {draft.answer}" if draft.answer is not None else (
                f"{str(draft.reply.text).strip()[:200]!r} (not in the answer format)")
            hint = HINTS[variant].format(gold=item.data["gold"])
            reflect = ask_and_judge(ask, Prompt(base.system, base.text + REFLECT.format(draft=shown, hint=hint),
                                                base.image, FreeTextForm(), None, name="reflection", scored=False))
            exchanges.append(reflect)
            if reflect.reply.error is None:
                final_text = base.text + FINAL.format(draft=shown, reflection=reflect.answer or "")
                exchanges.append(ask_and_judge(ask, replace(base, text=final_text), "final"))
        error = next((e.reply.error for e in exchanges if e.reply.error), None)
        final = exchanges[-1] if len(exchanges) == 3 else None
        score = {"gold": item.data["gold"], "initial": draft.answer, "final": final.answer if final else None,
                 "initial_correct": bool(draft.correct), "final_correct": bool(final and final.correct)}
        return ItemResult(exchanges, score, passed=score["final_correct"], error=error, end_state=item.state)

    def summarize(self, scores: list[dict[str, Any]]) -> dict[str, Any]:
        m = reflection_metrics([s["initial_correct"] for s in scores], [s["final_correct"] for s in scores])
        n = len(scores)
        return {"initial acc": Proportion(sum(s["initial_correct"] for s in scores), n),
                "final acc": Proportion(sum(s["final_correct"] for s in scores), n),
                "delta": m["delta"], "EFR": m["efr"], "OTR": m["otr"]}
