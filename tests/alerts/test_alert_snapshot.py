"""The speed alert's snapshot as a typed class: written and read back without loss."""

from alerts.lifecycle.snapshot import ArmFigures, PeerFigures, SpeedSnapshot

STORED = {
    "metric": "decode_tps",
    "shift": 0.3,
    "recent_hours": 24,
    "arms": [{"name": "whole series", "runs": 9, "shift": 0.3, "p_value": 0.001}],
    "peers": [
        {"endpoint": "Llama @ Globex", "slug": "globex", "baseline_median": 80.0,
         "recent_median": 79.0, "change": 0.0125, "recent_runs": 3}
    ],
    "samples": 15,
    "errors": 0,
    "verdict": "regressed",
    "from_a_newer_detector": {"kept": True},
}  # fmt: skip


def test_it_reads_a_stored_snapshot_into_typed_figures_and_writes_it_back_unchanged():
    snap = SpeedSnapshot.from_json(STORED)

    assert snap.arms == [ArmFigures("whole series", 9, 0.3, 0.001)]
    assert snap.peers and isinstance(snap.peers[0], PeerFigures)
    assert snap.other == {"from_a_newer_detector": {"kept": True}}, "unknown keys are kept"
    written = snap.to_json()
    assert {k: written[k] for k in STORED} == STORED, "a stored key changed on the way back"


def test_it_reads_an_older_snapshot_with_defaults_and_omits_what_was_never_computed():
    snap = SpeedSnapshot.from_json({"metric": "ttft_ms"})

    assert (snap.recent_hours, snap.family, snap.n_baseline, snap.baseline_days) == (24, 1, 0, 28)
    written = snap.to_json()
    for never_computed in ("peers", "buckets", "samples", "errors", "first_bad_at"):
        assert never_computed not in written, f"{never_computed} written though not computed"
