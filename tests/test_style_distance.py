"""Direction-corrected EMD (Mir et al. 2019 §4.2) on hand-computed cases and on Mir et al.'s stored scores."""
from __future__ import annotations

import numpy as np
import pytest

from styleval.errors import InputError
from styleval.style_models.distance import direction_corrected_emd, emd, parse_ground


def test_binary_emd_is_the_probability_shift() -> None:
    p, q = np.array([0.8, 0.2]), np.array([0.3, 0.7])
    assert emd(p, q)[0] == pytest.approx(0.5)
    # target class 1 (positive): the output gained probability of the target -> positive
    assert direction_corrected_emd(p, q, [1])[0] == pytest.approx(0.5)
    # target class 0: the output moved away from the target -> negated
    assert direction_corrected_emd(p, q, [0])[0] == pytest.approx(-0.5)


def test_no_change_scores_zero_and_counts_as_right_direction() -> None:
    p = np.array([[0.6, 0.4]])
    assert direction_corrected_emd(p, p, [0])[0] == 0.0


def test_three_classes_unit_ordinal_and_matrix() -> None:
    p, q = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])
    # unit ground distance: total variation, 0.5 * (0.3 + 0 + 0.3)
    assert emd(p, q, "unit")[0] == pytest.approx(0.3)
    # ordinal: |cumsum(p - q)| = |0.3| + |0.3| + |0| -> 0.3 mass moves two steps
    assert emd(p, q, "ordinal")[0] == pytest.approx(0.6)
    # the same cost as an explicit matrix, solved as a transport problem
    m = parse_ground("0 1 2; 1 0 1; 2 1 0", 3)
    assert emd(p, q, m)[0] == pytest.approx(0.6)
    # moving 0 -> 2 directly costs 5 * 0.3; shifting 0.3 from 0 to 1 and 0.3 from 1 to 2 costs 0.3 + 0.3
    m2 = np.array([[0, 1, 5], [1, 0, 1], [5, 1, 0]], dtype=float)
    assert emd(p, q, m2)[0] == pytest.approx(0.6)
    # a cheap direct route 0 -> 2 (cost 1): 0.3
    m3 = np.array([[0, 4, 1], [4, 0, 4], [1, 4, 0]], dtype=float)
    assert emd(p, q, m3)[0] == pytest.approx(0.3)


def test_three_classes_wrong_direction() -> None:
    src, out = np.array([[0.2, 0.5, 0.3]]), np.array([[0.1, 0.3, 0.6]])
    # target class 1 lost probability (0.5 -> 0.3): negated total variation 0.5 * (0.1 + 0.2 + 0.3)
    assert direction_corrected_emd(src, out, [1])[0] == pytest.approx(-0.3)
    assert direction_corrected_emd(src, out, [2])[0] == pytest.approx(0.3)


def test_bad_ground() -> None:
    with pytest.raises(InputError):
        parse_ground("euclid", 2)
    with pytest.raises(InputError):
        parse_ground("0 1; 1 0", 3)
    with pytest.raises(InputError):
        parse_ground("1 1; 1 1", 2)


def test_reproduces_mir2019_stored_scores(shared_data) -> None:
    base = shared_data / "mir2019/evaluations/automated/style_transfer_intensity/sentence_level"
    inputs = np.load(base / "style_distributions/input_distributions.npz", allow_pickle=True)
    for system in ("ARAE_lambda_1", "DAR_gamma_15"):
        outs = np.load(base / f"style_distributions/{system}.npz", allow_pickle=True)
        stored = np.load(base / f"scores_based_on_emd/{system}.npz", allow_pickle=True)
        for clf in ("textcnn", "fasttext"):
            src, out = inputs[clf].astype(float), outs[clf].astype(float)
            n = len(src)
            target = (np.arange(n) < n // 2).astype(int)  # first half negative->positive: target class 1
            ours = direction_corrected_emd(src, out, target)
            # the stored fastText scores were computed in half precision (steps of 1/512)
            tol = 1e-5 if clf == "textcnn" else 2e-3
            np.testing.assert_allclose(ours, stored[clf].astype(float), atol=tol)
