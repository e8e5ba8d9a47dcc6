import pytest
from helpers.data import SHARED

from virtuebench.prompts import PROMPTS, get_prompt

PAPER = SHARED / "seeds" / "001_d35fb11d0490f6b7.txt"
CVRR_PAPER = SHARED / "seeds" / "002_5da9834067173b40.txt"


def test_prompts_render_and_hash():
    honest, plain = get_prompt("honest"), get_prompt("plain")
    assert honest.render("What colour is the star?").endswith("\nQuestion: What colour is the star?")
    assert "DO NOT guess" in honest.render("q") and "DO NOT guess" not in plain.render("q")
    assert honest.hash != plain.hash and len(honest.hash) == 12
    with pytest.raises(KeyError, match="unknown prompt .sneaky.; known: honest, plain"):
        get_prompt("sneaky")


@pytest.mark.skipif(not PAPER.exists(), reason="shared/seeds is not beside the repository")
def test_prompts_are_verbatim_from_the_paper():
    text = " ".join(PAPER.read_text().split())
    for name in ("honest", "plain"):
        instruction = PROMPTS[name].text.split("\nQuestion:")[0]
        assert instruction in text, name
    # The paper's honest prompt is followed by the question line exactly as rendered here.
    assert " ".join(PROMPTS["honest"].text.split()) in text


@pytest.mark.skipif(not CVRR_PAPER.exists(), reason="shared/seeds is not beside the repository")
def test_dscp_prompts_are_verbatim_from_the_cvrr_paper():
    text = " ".join(CVRR_PAPER.read_text().split())
    dscp = get_prompt("dscp")
    assert " ".join(dscp.context_template.split()) in text
    step2 = " ".join(dscp.template.split()).replace("{context}", "{step 1 response}").replace("{question}", "{User question}")
    assert step2 in text
    assert " ".join(PROMPTS["dscp_step1"].text.split()).removesuffix(" Question: {question}") in text


def test_two_step_prompt_needs_its_context():
    dscp = get_prompt("dscp")
    with pytest.raises(ValueError, match="context"):
        dscp.render("Why?")
    assert dscp.render("Why?", "A man runs.").startswith("Context for the given video is: A man runs.. Now answer")
    assert dscp.hash != get_prompt("dscp_step1").hash


def test_the_registered_prompts_keep_the_hashes_their_answers_were_recorded_with():
    """Every response records its prompt's hash: a prompt whose text moved (prompts.py's dict became the PROMPTS
    registry and prompts/texts.py, issue 51) must hash as before, or every stored answer would be asked again. The
    values are the hashes of the texts as they stood before the move."""
    before = {
        "honest": "ead4b17af3ec",
        "plain": "f12f027bcb52",
        "standard": "627815778326",
        "cot": "d2b197af7c03",
        "dscp_step1": "2707e66c291e",
        "dscp": "d1d2bd03fea2",
        "reference": "5b72a34d23ee",
    }
    assert {name: get_prompt(name).hash for name in before} == before
    assert set(before) <= set(PROMPTS)
    assert [name for name in PROMPTS if PROMPTS[name].context is not None] == ["dscp"]
