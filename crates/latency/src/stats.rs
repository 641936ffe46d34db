//! Exact order statistics on small sample sets (the per-pair ratios, the
//! resource figures) where a histogram's 3 significant figures are not wanted.

/// The median of `values` (mean of the two middle values for an even count),
/// or `None` when empty. NaNs sort last.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The median of integer values, rounded down for an even count.
pub fn median_u64(values: &[u64]) -> Option<u64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_unstable();
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        v[n / 2 - 1] / 2 + v[n / 2] / 2 + (v[n / 2 - 1] % 2 + v[n / 2] % 2) / 2
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_odd_even_empty() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median_u64(&[]), None);
        assert_eq!(median_u64(&[9, 1, 5]), Some(5));
        assert_eq!(median_u64(&[1, 2, 3, 4]), Some(2));
        assert_eq!(median_u64(&[u64::MAX, u64::MAX]), Some(u64::MAX));
    }
}
