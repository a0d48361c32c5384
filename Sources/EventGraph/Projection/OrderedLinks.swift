internal import LMDB

// Ordered to-many relationships, O(log n) a change (Docs/store-layout.md, "Ordered lists").
//
// A list is kept in `links` under (object, relationship, order key) → target, so it reads
// back in key order with one cursor range, as every other relationship does. `members`
// holds each member's order key, (object, relationship, target) → order key, and under
// (object, relationship) alone the list's length. Order keys are u64s that leave room
// between neighbours: the first member gets 2^63, one appended the last key + 2^32, one
// prepended the first key − 2^32, one inserted the midpoint of its neighbours' keys, when
// its bucket (the keys sharing its top 32 bits) holds fewer than 64 members. Otherwise — two
// neighbours' keys touch, or the bucket is full — the smallest window of members around the
// place (doubling) is renumbered evenly over the buckets between its outer neighbours',
// at most 64 to a bucket. A list of more than 128 members also keeps counts by bucket
// (Projection/OrderedRanks.swift), so a position and a key are found from each other in a
// fixed number of reads. Every writer (the projector, a clone's fresh objects) goes through
// here, so the same events always give the same keys, which `verify` compares byte for byte.

/// The order keys of ordered lists.
enum OrderKeys {
  static let first: UInt64 = 1 << 63
  static let gap: UInt64 = 1 << 32

  /// A key strictly between `a` and `b` (`nil`: no neighbour on that side), when there is one.
  static func between(_ a: UInt64?, _ b: UInt64?) -> UInt64? {
    switch (a, b) {
    case (nil, nil): return first
    case (let a?, nil):
      if UInt64.max - a > gap { return a + gap }
      return UInt64.max - a >= 2 ? a + (UInt64.max - a) / 2 : nil
    case (nil, let b?):
      if b > gap { return b - gap }
      return b >= 2 ? b / 2 : nil
    case (let a?, let b?):
      return b > a && b - a >= 2 ? a + (b - a) / 2 : nil
    }
  }

  /// Where a new member goes at `position` of a list of `count` members whose keys
  /// `keys(range)` reads and whose buckets `occupancy(key)` counts (the members whose keys
  /// share `key`'s top 32 bits, OrderRanks): its key, and the members whose keys change
  /// (their positions before the insert, and their new keys).
  ///
  /// A bucket never holds more than `OrderRanks.bucketLimit` members: a key between the
  /// neighbours is taken only where its bucket has room, and a renumbered window's keys
  /// are spread over the buckets strictly between those of the window's outer neighbours,
  /// at most that many to a bucket.
  ///
  /// The one algorithm of every writer: the store's lists and a clone's in memory.
  static func place(
    at position: Int, count: Int, keys: (Range<Int>) throws -> [UInt64], occupancy: (UInt64) throws -> Int
  ) throws -> (key: UInt64, moved: [(position: Int, key: UInt64)]) {
    let neighbours = try keys(max(0, position - 1)..<min(count, position + 1))
    let before = position > 0 ? neighbours.first : nil
    let after = position < count ? neighbours.last : nil
    if let key = between(before, after), try occupancy(key) < OrderRanks.bucketLimit { return (key, []) }
    // The smallest window around the place, doubling, whose outer neighbours' buckets leave
    // room between them to spread it.
    let bucketWidth = UInt64(1) << 32
    let step = bucketWidth / UInt64(OrderRanks.bucketLimit)
    var half = 1
    while true {
      let lower = max(0, position - half)
      let upper = min(count, position + half)
      // The keys the window may take: past the bucket of the member below it, before the
      // bucket of the member above it.
      let low = lower > 0 ? (OrderRanks.bucket(try keys((lower - 1)..<lower)[0]) + 1) << 32 : 0
      let high = upper < count ? OrderRanks.bucket(try keys(upper..<(upper + 1))[0]) << 32 : UInt64.max
      let slots = UInt64(upper - lower + 1)
      if high > low, (high - low) / (slots + 1) >= step {
        let spacing = (high - low) / (slots + 1)
        var moved: [(position: Int, key: UInt64)] = []
        var free: UInt64 = 0
        for i in 0..<Int(slots) {
          let key = low + spacing * UInt64(i + 1)
          let at = lower + i
          if at == position { free = key } else { moved.append((at < position ? at : at - 1, key)) }
        }
        return (free, moved)
      }
      guard lower > 0 || upper < count else { throw StoreError.corrupt("an ordered list has no room for a member") }
      half *= 2
    }
  }
}

/// An ordered list named by its object and relationship.
struct ListName: Hashable {
  let object: ObjectID
  let rel: LinkSlot
}

/// An ordered list held in memory, keyed as the store would key it (a clone's new lists).
struct OrderedListModel {
  private(set) var members: [(key: UInt64, target: ObjectID)] = []

  mutating func insert(_ t: ObjectID, at position: Int?) throws {
    let at = position ?? members.count
    let (key, moved) = try OrderKeys.place(at: at, count: members.count) { r in
      members[r].map(\.key)
    } occupancy: { key in
      let bucket = OrderRanks.bucket(key)
      return firstIndex(from: (bucket + 1) << 32, bucket: bucket + 1) - firstIndex(from: bucket << 32, bucket: bucket)
    }
    for m in moved { members[m.position].key = m.key }
    members.insert((key, t), at: at)
  }

  /// The index of the first member whose key is at least `start` (the first key of bucket
  /// `bucket`; past the end for the bucket after the last).
  private func firstIndex(from start: UInt64, bucket: UInt64) -> Int {
    guard bucket <= UInt64.max >> 32 else { return members.count }
    var (lo, hi) = (0, members.count)
    while lo < hi {
      let mid = (lo + hi) / 2
      if members[mid].key < start { lo = mid + 1 } else { hi = mid }
    }
    return lo
  }
}

extension GraphReader {
  /// The length of an ordered list.
  func orderedCount(_ o: ObjectID, _ rel: LinkSlot) throws -> Int {
    let stored = try txn.withValue(dbs.members, key: StoreKey.links(o, rel)) { KeyField.u64($0, at: 0) }
    return stored.flatMap { $0 }.map { Int($0) } ?? 0
  }

  /// The order key of `t` in an ordered list, `nil` when it is not a member.
  func orderKey(_ o: ObjectID, _ rel: LinkSlot, of t: ObjectID) throws -> UInt64? {
    let stored = try txn.withValue(dbs.members, key: StoreKey.link(o, rel, target: t)) { KeyField.u64($0, at: 0) }
    return stored.flatMap { $0 }
  }

  /// The position of `t` in an ordered list: the members before its key, counted with one
  /// cursor step each in a short list, from the counts in a long one.
  func orderedPosition(_ o: ObjectID, _ rel: LinkSlot, of t: ObjectID) throws -> Int? {
    guard let key = try orderKey(o, rel, of: t) else { return nil }
    if try orderedCount(o, rel) > OrderRanks.threshold { return try rankedPosition(o, rel, of: key) }
    var position = 0
    let prefix = StoreKey.links(o, rel)
    try txn.forEach(dbs.links, from: prefix) { k, _ in
      guard KeyField.hasPrefix(k, prefix), let found = LinkEntry.last(k), found < key else { return false }
      position += 1
      return true
    }
    return position
  }

  /// The members at positions `range` of an ordered list of `count` members, with their
  /// keys, reached from the nearer end of a short list, through the counts of a long one.
  func orderedSlice(_ o: ObjectID, _ rel: LinkSlot, _ range: Range<Int>, count: Int) throws -> [(
    key: UInt64, target: ObjectID
  )] {
    guard !range.isEmpty else { return [] }
    return try txn.withCursor(dbs.links) { cursor in
      let prefix = StoreKey.links(o, rel)
      func current(_ cursor: borrowing Cursor) throws -> (key: UInt64, target: ObjectID) {
        try cursor.withCurrent { k, v in
          guard KeyField.hasPrefix(k, prefix), let key = LinkEntry.last(k), let t = KeyField.u64(v, at: 0) else {
            throw StoreError.corrupt("\(display(o)): ordered list \(rel) is shorter than its length \(count)")
          }
          return (key, ObjectID(t))
        }
      }
      func step(_ cursor: borrowing Cursor, _ forward: Bool) throws {
        guard try forward ? cursor.next() : cursor.previous() else {
          throw StoreError.corrupt("\(display(o)): ordered list \(rel) is shorter than its length \(count)")
        }
      }
      if count > OrderRanks.threshold {
        let first = try rankedKey(o, rel, at: range.lowerBound)
        guard try cursor.find(StoreKey.link(o, rel, order: first)) else {
          throw StoreError.corrupt("\(display(o)): ordered list \(rel) has no member at key \(first)")
        }
      } else if range.lowerBound <= count - range.upperBound {
        guard try cursor.seek(prefix) else { throw StoreError.corrupt("\(display(o)): ordered list \(rel) is empty") }
        for _ in 0..<range.lowerBound { try step(cursor, true) }
      } else {
        // From the last member: the first key past the list, then back one.
        let past = StoreKey.links(o, rel.next)
        if try cursor.seek(past) {
          try step(cursor, false)
        } else if try !cursor.last() {
          throw StoreError.corrupt("\(display(o)): ordered list \(rel) is empty")
        }
        for _ in 0..<(count - range.lowerBound - 1) { try step(cursor, false) }
      }
      var result = [try current(cursor)]
      for _ in 1..<range.count {
        try step(cursor, true)
        result.append(try current(cursor))
      }
      return result
    }
  }
}

extension GraphReader where T == WriteHandle {
  /// Puts `t` at `position` of an ordered list of `count` members (at its end when
  /// `position` is `count`); `t` is not a member (the caller checked).
  /// - Returns: the key `t` got.
  @discardableResult
  func insertOrdered(_ o: ObjectID, _ rel: LinkSlot, _ t: ObjectID, at position: Int, count: Int) throws -> UInt64 {
    let (key, moved) = try OrderKeys.place(at: position, count: count) { r in
      try orderedSlice(o, rel, r, count: count).map(\.key)
    } occupancy: { key in
      try bucketOccupancy(o, rel, of: key, count: count)
    }
    if let firstMoved = moved.first, let lastMoved = moved.last {
      // A window renumbered: its members, in order, take the new keys in order; the old
      // keys go first, so that no new key meets an old one.
      let window = try orderedSlice(o, rel, firstMoved.position..<(lastMoved.position + 1), count: count)
      let counted = count > OrderRanks.threshold
      for m in window {
        try txn.delete(dbs.links, key: StoreKey.link(o, rel, order: m.key))
        if counted { try adjustRank(o, rel, key: m.key, by: -1) }
      }
      for (m, member) in zip(moved, window) {
        try txn.put(dbs.links, key: StoreKey.link(o, rel, order: m.key), value: BigEndianKey(member.target.rawValue))
        try txn.put(dbs.members, key: StoreKey.link(o, rel, target: member.target), value: BigEndianKey(m.key))
        if counted { try adjustRank(o, rel, key: m.key, by: 1) }
      }
    }
    try put(o, rel, t, key: key, count: count + 1)
    return key
  }

  /// Appends `t` to an ordered list of `count` members whose last key the caller knows:
  /// the key it got, or `nil` (nothing written) when there is no room after `last`.
  func appendOrdered(_ o: ObjectID, _ rel: LinkSlot, _ t: ObjectID, after last: UInt64, count: Int) throws -> UInt64? {
    guard let key = OrderKeys.between(last, nil) else { return nil }
    try put(o, rel, t, key: key, count: count + 1)
    return key
  }

  /// Puts `t` into an ordered list under the order key it had before (a base's replay); `t`
  /// is not a member (the caller checked).
  func placeOrdered(_ o: ObjectID, _ rel: LinkSlot, _ t: ObjectID, key: UInt64) throws {
    if try txn.contains(dbs.links, key: StoreKey.link(o, rel, order: key)) {
      throw StoreError.corrupt("\(display(o)): the base gives order key \(key) of list \(rel.stored) twice")
    }
    try put(o, rel, t, key: key, count: try orderedCount(o, rel) + 1)
  }

  /// Writes a member's entries and the list's new length.
  private func put(_ o: ObjectID, _ rel: LinkSlot, _ t: ObjectID, key: UInt64, count: Int) throws {
    try txn.put(dbs.links, key: StoreKey.link(o, rel, order: key), value: BigEndianKey(t.rawValue))
    try txn.put(dbs.members, key: StoreKey.link(o, rel, target: t), value: BigEndianKey(key))
    try txn.put(dbs.members, key: StoreKey.links(o, rel), value: BigEndianKey(UInt64(count)))
    try countRank(o, rel, key: key, added: true, count: count)
  }

  /// Removes `t` from an ordered list; false when it is not a member.
  func removeOrdered(_ o: ObjectID, _ rel: LinkSlot, _ t: ObjectID) throws -> Bool {
    guard let key = try orderKey(o, rel, of: t) else { return false }
    let count = try orderedCount(o, rel)
    guard try txn.delete(dbs.links, key: StoreKey.link(o, rel, order: key)), count > 0 else {
      throw StoreError.corrupt("\(display(o)): ordered list \(rel) has no entry for its member \(display(t))")
    }
    try txn.delete(dbs.members, key: StoreKey.link(o, rel, target: t))
    if count == 1 {
      try txn.delete(dbs.members, key: StoreKey.links(o, rel))
    } else {
      try txn.put(dbs.members, key: StoreKey.links(o, rel), value: BigEndianKey(UInt64(count - 1)))
    }
    try countRank(o, rel, key: key, added: false, count: count - 1)
    return true
  }
}
