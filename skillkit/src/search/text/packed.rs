//! Terms of at most 16 ASCII bytes packed into one integer (nearly every
//! word of a skill), and the open-addressed map the word counter keeps them
//! in, hashed with keys of its own.

/// A term of at most 16 ASCII bytes, packed little-endian into an integer
/// and padded with zeros: a term's bytes are letters and digits, never 0,
/// so its length is where the zeros start.
pub(crate) type Packed = u128;

/// The most bytes a [`Packed`] term holds.
pub(super) const PACKED: usize = 16;

/// `term` packed, when it is ASCII and at most 16 bytes.
pub(crate) fn pack(term: &str) -> Option<Packed> {
    let bytes = term.as_bytes();
    if bytes.is_empty() || bytes.len() > PACKED || !bytes.is_ascii() || bytes.contains(&0) {
        return None;
    }
    let mut buf = [0u8; PACKED];
    buf[..bytes.len()].copy_from_slice(bytes);
    Some(Packed::from_le_bytes(buf))
}

/// The text of a packed term, in `buf`.
pub(crate) fn unpack(term: Packed, buf: &mut [u8; PACKED]) -> &str {
    *buf = term.to_le_bytes();
    let len = PACKED - (term.leading_zeros() / 8) as usize;
    // Packed terms are ASCII; an integer that is not one gives "".
    std::str::from_utf8(&buf[..len]).unwrap_or_default()
}

/// The keys of a hash of packed terms ([`HashKeys::hash`]), random for each
/// table that uses them. Terms come from skills: with a hash anyone can
/// compute, an author could write words that all land in one place of a
/// table, and each lookup would then walk through all of them (under the
/// index's lock, for the dictionary). Keys nobody outside the process knows
/// leave no way to choose such words.
#[derive(Clone, Copy)]
pub(crate) struct HashKeys([u64; 2]);

impl Default for HashKeys {
    /// Keys drawn from the operating system's randomness (through
    /// [`RandomState`](std::hash::RandomState), which draws it once a
    /// thread).
    fn default() -> HashKeys {
        use std::hash::BuildHasher;
        let random = std::hash::RandomState::new();
        HashKeys([random.hash_one(0u8), random.hash_one(1u8)])
    }
}

impl HashKeys {
    /// The hash of `term`: its two halves, each mixed with a key, multiplied
    /// and the product's halves folded (as `foldhash` does); good in its
    /// high bits.
    #[inline]
    pub(crate) fn hash(self, term: Packed) -> u64 {
        let low = term as u64 ^ self.0[0];
        let high = (term >> 64) as u64 ^ self.0[1];
        let product = u128::from(low) * u128::from(high);
        product as u64 ^ (product >> 64) as u64
    }

    /// A key for another hash of the same table (the text of a long term).
    pub(crate) fn seed(self) -> u64 {
        self.0[0] ^ self.0[1].rotate_left(32)
    }
}

/// An open-addressed map from packed words to numbers, at most three
/// quarters full (a key of 0 marks a free place: no packed word is 0). A
/// key and its number share a place, so a lookup that finds its key reads
/// one cache line.
pub(super) struct PackedMap {
    pub(super) places: Vec<Place>,
    keys: HashKeys,
    pub(super) len: usize,
    /// 64 − log2 of the places: a hash's top bits pick the place.
    shift: u32,
}

/// A key (as two halves: a `u128` would align the place to 32 bytes) and
/// its number.
#[derive(Clone, Copy, Default)]
pub(super) struct Place {
    low: u64,
    high: u64,
    value: u32,
}

impl Place {
    #[inline(always)]
    pub(super) fn key(&self) -> Packed {
        Packed::from(self.low) | Packed::from(self.high) << 64
    }
}

impl PackedMap {
    pub(super) fn with_places(places: usize) -> PackedMap {
        PackedMap::keyed(places, HashKeys::default())
    }

    pub(super) fn keyed(places: usize, keys: HashKeys) -> PackedMap {
        PackedMap {
            places: vec![Place::default(); places],
            keys,
            len: 0,
            shift: 64 - places.trailing_zeros(),
        }
    }

    /// Where `key` is, or the free place where it would go, and whether it
    /// is there.
    #[inline(always)]
    pub(super) fn find(&self, key: Packed) -> (usize, bool) {
        let mask = self.places.len() - 1;
        let mut at = self.home_at(key);
        loop {
            let k = self.places[at].key();
            if k == key {
                return (at, true);
            }
            if k == 0 {
                return (at, false);
            }
            at = (at + 1) & mask;
        }
    }

    /// The key and number in the first place `key` may be in (what
    /// [`find`](Self::find) reads first): a copy, read ahead of the
    /// lookups that need it.
    #[inline(always)]
    pub(super) fn home(&self, key: Packed) -> (Packed, u32) {
        let place = &self.places[self.home_at(key)];
        (place.key(), place.value)
    }

    /// The first place `key` may be in: its hash's top bits.
    #[inline(always)]
    fn home_at(&self, key: Packed) -> usize {
        (self.keys.hash(key) >> self.shift) as usize
    }

    /// The number at `at` (a place where [`find`](Self::find) found its key).
    #[inline(always)]
    pub(super) fn value(&self, at: usize) -> u32 {
        self.places[at].value
    }

    /// Puts `key` with `value` at the free place `at` ([`find`](Self::find)).
    pub(super) fn put(&mut self, at: usize, key: Packed, value: u32) {
        self.places[at] = Place {
            low: key as u64,
            high: (key >> 64) as u64,
            value,
        };
        self.len += 1;
        if self.len * 4 > self.places.len() * 3 {
            self.grow();
        }
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let mut grown = PackedMap::keyed(self.places.len() * 2, self.keys);
        for place in &self.places {
            let key = place.key();
            if key != 0 {
                let (at, _) = grown.find(key);
                grown.put(at, key, place.value);
            }
        }
        *self = grown;
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.places.capacity() * std::mem::size_of::<Place>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_keeps_the_term() {
        let mut buf = [0u8; PACKED];
        for term in ["ab", "report", "sixteen-letters!", "0123456789abcdef"] {
            let packed = pack(term).unwrap();
            assert_eq!(unpack(packed, &mut buf), term);
        }
        assert_eq!(pack("seventeen letters"), None);
        assert_eq!(pack("café"), None);
        assert_eq!(pack(""), None);
    }

    #[test]
    fn maps_grow_and_keep_every_key() {
        let mut map = PackedMap::with_places(4);
        for key in 1..=1000u128 {
            let (at, found) = map.find(key);
            assert!(!found);
            map.put(at, key, key as u32 * 2);
        }
        assert_eq!(map.len, 1000);
        assert!(map.places.len() * 3 >= 4000);
        for key in 1..=1000u128 {
            let (at, found) = map.find(key);
            assert!(found);
            assert_eq!(map.value(at), key as u32 * 2);
        }
        assert!(!map.find(1001).1);
    }

    /// How far past its first place each key of `map` sits, summed: the
    /// extra places that looking up every key reads.
    fn displacement(map: &PackedMap) -> usize {
        let mask = map.places.len() - 1;
        let places = map.places.iter().enumerate();
        let taken = places.filter(|(_, place)| place.key() != 0);
        taken
            .map(|(at, place)| at.wrapping_sub(map.home_at(place.key())) & mask)
            .sum()
    }

    #[test]
    fn words_chosen_to_collide_under_known_keys_spread_under_a_tables_own() {
        // Words of lowercase letters (as a body can hold), found by trying
        // them in turn: all with the same top 9 bits of their hash under
        // keys an author would know.
        let word = |mut i: u64| {
            let mut bytes = [0u8; PACKED];
            for byte in &mut bytes[..8] {
                *byte = b'a' + (i % 26) as u8;
                i /= 26;
            }
            Packed::from_le_bytes(bytes)
        };
        let known = HashKeys::default();
        let target = known.hash(word(0)) >> 55;
        let words: Vec<Packed> = (0..)
            .map(word)
            .filter(|&w| known.hash(w) >> 55 == target)
            .take(1000)
            .collect();
        let mut attacked = PackedMap::keyed(1024, known);
        let mut own = PackedMap::with_places(1024);
        for (i, &w) in words.iter().enumerate() {
            for map in [&mut attacked, &mut own] {
                let (at, found) = map.find(w);
                assert!(!found);
                map.put(at, w, i as u32);
            }
        }
        let n = words.len();
        // Under the keys they were chosen for, they pile up in one run of
        // places, each lookup a walk through it...
        assert!(
            displacement(&attacked) > 100 * n,
            "{}",
            displacement(&attacked)
        );
        // ...and under a table's own keys they spread like any words.
        assert!(displacement(&own) < 5 * n, "{}", displacement(&own));
    }
}
