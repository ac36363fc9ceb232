//! Row blocks of a CQ matrix: several logical matrices share one container tensor (the mHC
//! `phi` matrices stack every layer's rows; the tied embedding's first rows are the output head;
//! probe-head rows are grouped per layer). A block is an ordinary [`CqMatrix`] over a sub-slice
//! of the codes and norms, so every kernel applies to it unchanged.
use crate::kernels::cq::CqMatrix;
use crate::{Error, Result};

impl<'a> CqMatrix<'a> {
    /// Rows `start..start + count` as a matrix of their own (zero-copy).
    pub fn row_block(&self, start: usize, count: usize) -> Result<CqMatrix<'a>> {
        let end = start.checked_add(count).filter(|&e| e <= self.rows() && count > 0);
        if end.is_none() {
            return Err(Error::InvalidArgument {
                name: "row_block",
                reason: "rows outside the matrix",
            });
        }
        Ok(self.rows_view(start..start + count))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::cq::CqWidth;
    use crate::kernels::test_util::{pseudo_random, pseudo_random_bytes};

    #[test]
    fn a_block_computes_the_same_rows_as_the_whole_matrix() {
        let (rows, cols, group) = (7, 40, 16);
        let cols_padded = 48;
        let packed = pseudo_random_bytes(rows * cols_padded * 3 / 8, 5);
        let norms: Vec<u8> = (0..rows * 3).flat_map(|i| [0x00, 0x38 + (i % 4) as u8]).collect();
        let levels: Vec<f32> = (0..8).map(|i| (i as f32 - 3.5) / 16.0).collect();
        let m =
            CqMatrix::from_parts(rows, cols, group, CqWidth::B3, &packed, &norms, &levels).unwrap();
        let x = pseudo_random(cols, 3);
        let mut scratch = vec![0.0f32; cols_padded];
        let mut whole = vec![0.0f32; rows];
        m.matvec(&x, &mut scratch, &mut whole);
        let block = m.row_block(2, 4).unwrap();
        let mut part = vec![0.0f32; 4];
        block.matvec(&x, &mut scratch, &mut part);
        assert_eq!(part, whole[2..6]);
    }

    #[test]
    fn blocks_past_the_last_row_or_empty_are_refused() {
        let packed = [0u8; 2 * 16 / 2];
        let norms = [0u8; 4];
        let levels = [0.0f32; 16];
        let m = CqMatrix::from_parts(2, 16, 16, CqWidth::B4, &packed, &norms, &levels).unwrap();
        assert!(m.row_block(1, 2).is_err());
        assert!(m.row_block(0, 0).is_err());
        assert!(m.row_block(usize::MAX, 2).is_err());
        assert!(m.row_block(1, 1).is_ok());
    }
}
