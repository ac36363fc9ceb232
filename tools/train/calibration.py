"""How well a confidence separates right answers from wrong ones (standard library only):
AUROC, Brier score, expected calibration error, and the accuracy of the answers kept above a
threshold (upstream's harness gates calls on confidence the same way)."""


def auroc(scores, labels):
    """The probability that a right answer scores above a wrong one (ties count half)."""
    pairs = sorted(zip(scores, labels))
    pos = sum(1 for _, y in pairs if y)
    neg = len(pairs) - pos
    if not pos or not neg:
        return float("nan")
    rank_sum, i = 0.0, 0
    while i < len(pairs):
        j = i
        while j < len(pairs) and pairs[j][0] == pairs[i][0]:
            j += 1
        mid = (i + 1 + j) / 2  # the mean 1-based rank of a tie group
        rank_sum += mid * sum(1 for _, y in pairs[i:j] if y)
        i = j
    return (rank_sum - pos * (pos + 1) / 2) / (pos * neg)


def brier(scores, labels):
    return sum((p - y) ** 2 for p, y in zip(scores, labels)) / len(scores)


def ece(scores, labels, bins=10):
    """Expected calibration error over equal-width bins."""
    total = 0.0
    for b in range(bins):
        group = [(p, y) for p, y in zip(scores, labels) if min(int(p * bins), bins - 1) == b]
        if group:
            mean_p = sum(p for p, _ in group) / len(group)
            mean_y = sum(y for _, y in group) / len(group)
            total += abs(mean_p - mean_y) * len(group) / len(scores)
    return total


def summary(scores, labels, thresholds=(0.5, 0.8, 0.9)):
    """One line: the separation and calibration figures, and per threshold the share of answers
    kept and their accuracy."""
    labels = [1.0 if y else 0.0 for y in labels]
    parts = [f"n {len(scores)}, right {sum(labels) / len(labels):.3f}",
             f"AUROC {auroc(scores, labels):.4f}", f"Brier {brier(scores, labels):.4f}",
             f"ECE {ece(scores, labels):.4f}"]
    for t in thresholds:
        kept = [y for p, y in zip(scores, labels) if p >= t]
        acc = sum(kept) / len(kept) if kept else float("nan")
        parts.append(f">= {t}: kept {len(kept) / len(scores):.3f}, right {acc:.3f}")
    return "; ".join(parts)
