//! Associative arrays, listed in the order bash lists them.

use rustc_hash::FxHashMap as HashMap;

/// bash keeps an associative array in a hash table of 1024 buckets (FNV-1
/// of the key, read as C's signed chars) and lists it bucket by bucket,
/// the newest entry of a bucket first. Scripts that print `${!m[@]}`,
/// `${m[@]}` or `declare -p m` see that order, so rush keeps it: each
/// entry remembers when its key was added (assigning an existing key
/// keeps its place; unsetting and adding it again moves it).
///
/// bash's table grows at 4096 entries, which reorders a bucket; rush does
/// not follow it there.
#[derive(Debug, Clone)]
pub struct Assoc {
    map: HashMap<Vec<u8>, (u64, Vec<u8>)>,
    next: u64,
    /// bash's buckets for this table: 1024, but 256 for `BASH_CMDS` (the
    /// hash table's) and 64 for `BASH_ALIASES`.
    buckets: u32,
}

impl Default for Assoc {
    fn default() -> Self {
        Assoc::with_buckets(1024)
    }
}

impl PartialEq for Assoc {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.map.iter().all(|(k, (_, v))| other.get(k) == Some(v))
    }
}

impl Eq for Assoc {}

/// bash's hash of `key` (FNV-1, C's signed chars).
pub fn hash(key: &[u8]) -> u32 {
    key.iter().fold(2_166_136_261u32, |h, &c| {
        h.wrapping_mul(16_777_619) ^ (c as i8 as i32 as u32)
    })
}

impl Assoc {
    /// An empty table of `buckets` (a power of two) buckets.
    pub fn with_buckets(buckets: u32) -> Self {
        Assoc {
            map: HashMap::default(),
            next: 0,
            buckets,
        }
    }

    /// How many buckets bash's table for this array has.
    pub fn buckets(&self) -> u32 {
        self.buckets
    }

    pub fn get(&self, key: &[u8]) -> Option<&Vec<u8>> {
        self.map.get(key).map(|(_, v)| v)
    }

    pub fn contains_key(&self, key: &[u8]) -> bool {
        self.map.contains_key(key)
    }

    pub fn insert(&mut self, key: Vec<u8>, value: Vec<u8>) {
        match self.map.get_mut(&key) {
            Some(e) => e.1 = value,
            None => {
                self.next += 1;
                self.map.insert(key, (self.next, value));
            }
        }
    }

    pub fn remove(&mut self, key: &[u8]) -> Option<Vec<u8>> {
        self.map.remove(key).map(|(_, v)| v)
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The entries in bash's order.
    pub fn iter(&self) -> impl Iterator<Item = (&Vec<u8>, &Vec<u8>)> {
        let mask = self.buckets - 1;
        let mut all: Vec<_> = self.map.iter().collect();
        all.sort_unstable_by_key(|(k, (seq, _))| (hash(k) & mask, std::cmp::Reverse(*seq)));
        all.into_iter().map(|(k, (_, v))| (k, v))
    }

    pub fn keys(&self) -> impl Iterator<Item = &Vec<u8>> {
        self.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl Iterator<Item = &Vec<u8>> {
        self.iter().map(|(_, v)| v)
    }

    /// The same keys in the same places, each value through `f`.
    pub fn try_map_values<E>(
        &self,
        mut f: impl FnMut(&[u8]) -> Result<Vec<u8>, E>,
    ) -> Result<Assoc, E> {
        let mut map = HashMap::default();
        for (k, (seq, v)) in &self.map {
            map.insert(k.clone(), (*seq, f(v)?));
        }
        Ok(Assoc {
            map,
            next: self.next,
            buckets: self.buckets,
        })
    }
}

impl FromIterator<(Vec<u8>, Vec<u8>)> for Assoc {
    fn from_iter<I: IntoIterator<Item = (Vec<u8>, Vec<u8>)>>(iter: I) -> Self {
        let mut a = Assoc::default();
        for (k, v) in iter {
            a.insert(k, v);
        }
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The order bash 5.2 prints `declare -A foo=([one]=bar [two]=baz
    /// [three]=quux)` in (its tests/appendop).
    #[test]
    fn lists_in_bashs_order() {
        let mut a: Assoc = [("one", "bar"), ("two", "baz"), ("three", "quux")]
            .into_iter()
            .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
            .collect();
        let keys = |a: &Assoc| {
            a.keys()
                .map(|k| String::from_utf8_lossy(k).into_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(keys(&a), ["two", "three", "one"]);
        a.insert(b"0".to_vec(), b"zero".to_vec());
        a.insert(b"four".to_vec(), b"four".to_vec());
        assert_eq!(keys(&a), ["four", "0", "two", "three", "one"]);
        // A key assigned again keeps its place.
        a.insert(b"two".to_vec(), b"x".to_vec());
        assert_eq!(keys(&a), ["four", "0", "two", "three", "one"]);
    }
}
