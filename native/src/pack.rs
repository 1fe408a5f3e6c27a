//! A grep pack, read-only (the layout: `rag_indexer/store/grep_pack.py`). Every offset is checked against the
//! file's size when it is opened: a pack cut short or damaged is not read, and Python answers instead.

use std::fs::File;
use std::path::Path;

use memmap2::Mmap;

pub const VERSION: u32 = 2; // grep_pack.VERSION: in the file's name and its first line
const FORMAT: &[u8] = b"MFGREP2\n";
const SECTIONS: usize = FORMAT.len() + 8;
const HEADER: usize = SECTIONS + 32;
const GROUP: usize = 24;
pub const MARK_EVERY: usize = 16;
pub const PLAIN: u8 = 1;

pub struct Pack {
    data: Mmap,
    pub count: usize,
    paths_at: usize,
    texts_at: usize,
    marks_at: usize,
    flags_at: usize,
    ends_at: usize, // path ends, text ends, mark ends: three arrays of `count` u64
    groups: Vec<Group>,
}

/// One size group of signatures: its bits' log2, file numbers and transposed rows.
struct Group {
    bits_log2: u32,
    ids_at: usize,
    count: usize,
    rows_at: usize,
}

impl Pack {
    pub fn open(path: &Path) -> Option<Pack> {
        let file = File::open(path).ok()?;
        // SAFETY: packs are written under a private name and renamed into place, never changed after.
        let data = unsafe { Mmap::map(&file) }.ok()?;
        if data.len() < HEADER || &data[..FORMAT.len()] != FORMAT {
            return None;
        }
        let count = u32_at(&data, FORMAT.len())? as usize;
        let groups = u32_at(&data, FORMAT.len() + 4)? as usize;
        let [paths_at, texts_at, marks_at, flags_at] = [0, 1, 2, 3].map(|k| u64_at(&data, SECTIONS + 8 * k));
        let mut pack = Pack {
            count,
            paths_at: paths_at?,
            texts_at: texts_at?,
            marks_at: marks_at?,
            flags_at: flags_at?,
            ends_at: HEADER.checked_add(groups.checked_mul(GROUP)?)?,
            groups: Vec::with_capacity(groups),
            data,
        };
        for g in 0..groups {
            let group = pack.group(HEADER + g * GROUP)?;
            pack.groups.push(group);
        }
        pack.checked().then_some(pack)
    }

    fn group(&self, at: usize) -> Option<Group> {
        let bits_log2 = u32_at(&self.data, at)?;
        let count = u32_at(&self.data, at + 4)? as usize;
        let (ids_at, rows_at) = (u64_at(&self.data, at + 8)?, u64_at(&self.data, at + 16)?);
        let width = count.div_ceil(8);
        let fits = bits_log2 <= 32
            && ids_at.checked_add(4 * count).is_some_and(|end| end <= self.data.len())
            && rows_at
                .checked_add(width << bits_log2)
                .is_some_and(|end| end <= self.data.len());
        fits.then_some(Group {
            bits_log2,
            ids_at,
            count,
            rows_at,
        })
    }

    /// Every array and section lies inside the file, ends ascend, and file numbers are in range.
    fn checked(&self) -> bool {
        let n = self.count;
        let size = self.data.len();
        if self.ends_at.checked_add(24 * n).is_none_or(|end| end > size) {
            return false;
        }
        let ascending = |k: usize| (1..n).all(|i| self.end(k, i - 1) <= self.end(k, i));
        if n == 0 || !(0..3).all(ascending) {
            return n == 0;
        }
        let text_end = self.texts_at.checked_add(self.end(1, n - 1));
        let marks_end = self
            .end(2, n - 1)
            .checked_mul(4)
            .and_then(|m| m.checked_add(self.marks_at));
        let sections_fit = [self.paths_at.checked_add(self.end(0, n - 1)), text_end, marks_end]
            .into_iter()
            .chain([self.flags_at.checked_add(n)])
            .all(|end| end.is_some_and(|end| end <= size));
        let texts_start_with_newlines = (0..n).all(|i| self.text_start(i) <= self.text_stop(i));
        sections_fit
            && texts_start_with_newlines
            && self
                .groups
                .iter()
                .all(|g| (0..g.count).all(|j| (self.id(g, j) as usize) < n))
    }

    fn end(&self, array: usize, i: usize) -> usize {
        u64_at(&self.data, self.ends_at + 8 * (array * self.count + i)).unwrap_or(usize::MAX)
    }

    fn start(&self, array: usize, i: usize) -> usize {
        if i == 0 {
            0
        } else {
            self.end(array, i - 1)
        }
    }

    pub fn path(&self, i: usize) -> &[u8] {
        &self.data[self.paths_at + self.start(0, i)..self.paths_at + self.end(0, i)]
    }

    /// Where file `i`'s text starts in the pack (past the newline before it).
    pub fn text_start(&self, i: usize) -> usize {
        self.texts_at + self.start(1, i) + 1
    }

    pub fn text_stop(&self, i: usize) -> usize {
        self.texts_at + self.end(1, i)
    }

    pub fn text(&self, i: usize) -> &[u8] {
        &self.data[self.text_start(i)..self.text_stop(i)]
    }

    pub fn plain(&self, i: usize) -> bool {
        self.data[self.flags_at + i] & PLAIN != 0
    }

    /// File `i`'s line marks: offsets (in its text) of lines 1 + MARK_EVERY * k, k >= 1.
    pub fn marks(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        let at = self.marks_at + 4 * self.start(2, i);
        (0..self.end(2, i) - self.start(2, i)).map(move |k| u32_at(&self.data, at + 4 * k).unwrap_or(0) as usize)
    }

    /// File numbers, in path order, whose signature holds every hash's bit (`Pack.candidates`).
    pub fn candidates(&self, hashes: &[u32]) -> Vec<usize> {
        let mut found = Vec::new();
        for g in &self.groups {
            let width = g.count.div_ceil(8);
            let mut alive = vec![0xFFu8; width];
            let mut bits: Vec<usize> = hashes
                .iter()
                .map(|&h| (u64::from(h) >> (32 - g.bits_log2)) as usize)
                .collect();
            bits.sort_unstable();
            bits.dedup();
            for bit in bits {
                let row = &self.data[g.rows_at + bit * width..g.rows_at + (bit + 1) * width];
                alive.iter_mut().zip(row).for_each(|(a, r)| *a &= r);
            }
            for j in 0..g.count {
                if alive[j / 8] & (1 << (j % 8)) != 0 {
                    found.push(self.id(g, j) as usize);
                }
            }
        }
        found.sort_unstable();
        found
    }

    fn id(&self, g: &Group, j: usize) -> u32 {
        u32_at(&self.data, g.ids_at + 4 * j).unwrap_or(u32::MAX)
    }
}

fn u32_at(data: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(data.get(at..at.checked_add(4)?)?.try_into().ok()?))
}

fn u64_at(data: &[u8], at: usize) -> Option<usize> {
    usize::try_from(u64::from_le_bytes(data.get(at..at.checked_add(8)?)?.try_into().ok()?)).ok()
}
