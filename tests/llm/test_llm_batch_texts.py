"""Answering a batch directory from text files: `cwm llm pending --export`, `answer-batch --from`, and the
waiting exit status of a command whose requests have no reply yet."""

from __future__ import annotations

import pytest

from cwm.cli import EXIT_WAITING, main
from cwm.llm import Message, Request
from cwm.llm.batch import BatchFileClient, PendingBatch
from cwm.llm.batch_texts import export_pending, import_answers, request_text


def _wait(directory, request):
    with pytest.raises(PendingBatch):
        BatchFileClient(directory).complete(request)


def test_a_request_exports_as_the_text_the_model_reads_and_its_answer_comes_back(tmp_path, capsys):
    plain = Request.user("write a tic-tac-toe module", temperature=0.0)
    talk = Request((Message("user", "first"), Message("assistant", "a reply"), Message("user", "fix it")),
                   system="you write code", temperature=0.0)
    _wait(tmp_path / "b", plain)
    _wait(tmp_path / "b", talk)
    assert main(["llm", "pending", str(tmp_path / "b"), "--export", str(tmp_path / "prompts")]) == 0
    assert "2 request(s) wait" in capsys.readouterr().out
    texts = sorted(p.read_text() for p in (tmp_path / "prompts").iterdir())
    assert texts == sorted(["write a tic-tac-toe module",
                            "## system\n\nyou write code\n\n## user\n\nfirst\n\n## assistant\n\na reply\n\n## user\n\nfix it"])
    answers = tmp_path / "answers"
    answers.mkdir()
    key = next(p.stem for p in (tmp_path / "prompts").iterdir() if p.read_text() == request_text(plain))
    (answers / f"{key}.md").write_text("def f(): ...\n")
    args = ["llm", "answer-batch", str(tmp_path / "b"), "--from", str(answers), "--answered-by", "a person"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "answered 1 request(s)" in out and "1 still wait" in out
    reply = BatchFileClient(tmp_path / "b").complete(plain)
    assert reply.text == "def f(): ...\n" and reply.model == "a person" and not reply.batch
    _wait(tmp_path / "b", talk)  # the unanswered one still waits


def test_a_request_for_several_candidates_needs_one_file_each(tmp_path):
    request = Request.user("three programs", n=3, temperature=1.0)
    _wait(tmp_path / "b", request)
    export_pending(tmp_path / "b", tmp_path / "p")
    key = next((tmp_path / "p").iterdir()).stem
    (tmp_path / "a").mkdir()
    for i in range(2):
        (tmp_path / "a" / f"{key}.{i}.md").write_text(f"program {i}")
    assert import_answers(tmp_path / "b", tmp_path / "a", model="m") == (0, 1)  # the third is missing
    (tmp_path / "a" / f"{key}.2.md").write_text("program 2")
    assert import_answers(tmp_path / "b", tmp_path / "a", model="m") == (1, 0)
    assert BatchFileClient(tmp_path / "b").complete(request).texts == ("program 0", "program 1", "program 2")


@pytest.mark.parametrize("content, message", [(b"   \n", "the answer is empty"), (b"\xff\xfe", "not UTF-8")])
def test_a_bad_answer_file_is_named(tmp_path, capsys, content, message):
    _wait(tmp_path / "b", Request.user("q", temperature=0.0))
    export_pending(tmp_path / "b", tmp_path / "p")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / next((tmp_path / "p").iterdir()).name).write_bytes(content)
    assert main(["llm", "answer-batch", str(tmp_path / "b"), "--from", str(tmp_path / "a"), "--answered-by", "x"]) == 2
    err = capsys.readouterr().err
    assert message in err and ".md" in err and "Traceback" not in err


def test_answers_from_files_must_say_who_wrote_them(tmp_path, capsys):
    _wait(tmp_path / "b", Request.user("q", temperature=0.0))
    assert main(["llm", "answer-batch", str(tmp_path / "b"), "--from", str(tmp_path)]) == 2
    assert "--from needs --answered-by" in capsys.readouterr().err


def test_synthesis_waiting_for_replies_is_its_own_exit_status_not_an_error(tmp_path, capsys):
    args = ["synthesize", "tic_tac_toe", "--llm", f"batch:{tmp_path / 'b'}", "--out", str(tmp_path / "run"),
            "--num-test", "0", "--quiet", "--no-sandbox"]
    assert main(args) == EXIT_WAITING
    err = capsys.readouterr().err
    assert err.startswith("cwm synthesize: waiting: 1 request(s) wait for replies") and "error" not in err
    assert main(["llm", "pending", str(tmp_path / "b")]) == 0
    assert "synthesis/initial" in capsys.readouterr().out
