import pytest

from conftest import SHARED
from virtuebench.prompts import TEMPLATES, get_prompt

PAPER = SHARED / "seeds" / "001_d35fb11d0490f6b7.txt"


def test_prompts_render_and_hash():
    honest, plain = get_prompt("honest"), get_prompt("plain")
    assert honest.render("What colour is the star?").endswith("\nQuestion: What colour is the star?")
    assert "DO NOT guess" in honest.render("q") and "DO NOT guess" not in plain.render("q")
    assert honest.hash != plain.hash and len(honest.hash) == 12
    with pytest.raises(KeyError, match="known prompts"):
        get_prompt("sneaky")


@pytest.mark.skipif(not PAPER.exists(), reason="shared/seeds is not beside the repository")
def test_prompts_are_verbatim_from_the_paper():
    text = " ".join(PAPER.read_text().split())
    for name, template in TEMPLATES.items():
        instruction = template.split("\nQuestion:")[0]
        assert instruction in text, name
    # The paper's honest prompt is followed by the question line exactly as rendered here.
    assert " ".join(TEMPLATES["honest"].split()) in text
