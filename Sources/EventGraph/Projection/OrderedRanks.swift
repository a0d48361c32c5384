internal import LMDB

// Positions in long ordered lists, O(1) reads and writes a change (Docs/store-layout.md,
// "Ordered lists").
//
// LMDB's B-tree keeps no counts, so a position cannot be found from a key, or a key from a
// position, without walking the list. A list longer than `OrderRanks.threshold` therefore
// keeps counts of its members by the top 32 bits of their order keys, a byte at a time: a
// node of level 0 counts the members by the first byte of their keys, a node of level 1
// (one for each first byte in use) by the second, down to level 3, whose counts are those
// of a bucket — the members whose keys share their top 32 bits. Order keys are placed so
// that a bucket holds at most `OrderRanks.bucketLimit` members (OrderKeys.place), so a
// position is four node reads and a walk of at most that many members, and a change is
// four node writes, whatever the list's length.
//
// The nodes are a function of the list's set of keys alone — a node exists exactly when
// one of its counts is not zero — so a list built by inserts and removals, by a rebuild
// or by a clone's bulk write holds the same bytes, which `verify` compares.

/// The counts kept for long ordered lists.
enum OrderRanks {
  /// Lists of more members than this keep counts; shorter ones are walked.
  static let threshold = 128
  /// The most members a bucket (keys sharing their top 32 bits) holds.
  static let bucketLimit = 64
  /// Levels of nodes, one for each of the top four bytes of a key.
  static let levels = 4
  /// A node's size: 256 counts, big-endian u32s.
  static let nodeSize = 256 * 4

  /// The byte of `key` that a node of `level` counts by.
  static func digit(_ key: UInt64, level: Int) -> Int {
    Int(truncatingIfNeeded: key >> UInt64(56 - 8 * level)) & 0xFF
  }

  /// The bytes above `level`'s: which node of that level counts `key`.
  static func prefix(_ key: UInt64, level: Int) -> UInt32 {
    level == 0 ? 0 : UInt32(truncatingIfNeeded: key >> UInt64(64 - 8 * level))
  }

  /// The bucket of `key`: its top 32 bits.
  static func bucket(_ key: UInt64) -> UInt64 { key >> 32 }

  /// The nodes of a list whose keys are `keys`, by (level, prefix), as the store keeps them.
  static func nodes(_ keys: some Sequence<UInt64>) -> [NodeName: [UInt32]] {
    var nodes: [NodeName: [UInt32]] = [:]
    for key in keys {
      for level in 0..<levels {
        nodes[NodeName(level: level, prefix: prefix(key, level: level)), default: Array(repeating: 0, count: 256)][
          digit(key, level: level)] += 1
      }
    }
    return nodes
  }

  /// A node's place among its list's nodes.
  struct NodeName: Hashable, Comparable {
    let level: Int
    let prefix: UInt32

    static func < (a: NodeName, b: NodeName) -> Bool { (a.level, a.prefix) < (b.level, b.prefix) }
  }

  /// A node's stored form.
  static func encode(_ counts: [UInt32]) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: nodeSize)
    for (i, c) in counts.enumerated() where c != 0 { put(c, at: i, in: &bytes) }
    return bytes
  }

  static func count(at digit: Int, in bytes: [UInt8]) -> UInt32 {
    (0..<4).reduce(0) { $0 << 8 | UInt32(bytes[digit * 4 + $1]) }
  }

  /// Adds `delta` (1 or −1) to a node's count at `digit`.
  ///
  /// An empty node (`[]`, one that does not exist) is made; one whose last count goes to
  /// zero is emptied. False when a count would go below zero.
  static func add(_ delta: Int, at digit: Int, in bytes: inout [UInt8]) -> Bool {
    if bytes.isEmpty { bytes = [UInt8](repeating: 0, count: nodeSize) }
    let current = count(at: digit, in: bytes)
    guard delta > 0 || current > 0 else { return false }
    put(delta > 0 ? current + 1 : current - 1, at: digit, in: &bytes)
    if delta < 0 && current == 1 && bytes.allSatisfy({ $0 == 0 }) { bytes = [] }
    return true
  }

  static func put(_ count: UInt32, at digit: Int, in bytes: inout [UInt8]) {
    for b in 0..<4 { bytes[digit * 4 + b] = UInt8(truncatingIfNeeded: count >> UInt32(24 - 8 * b)) }
  }
}

/// The count nodes a projector changed in the commit it is projecting.
///
/// They are kept in memory and written once, when the commit's object records are
/// (``Projector/writeObjects()``): a run of appends to a long list then writes each node
/// once, not four nodes a member. The projector's reader reads through it; an empty value
/// is a node removed.
final class PendingRanks {
  struct Key: Hashable, Comparable {
    let object: ObjectID
    let rel: LinkSlot
    let node: OrderRanks.NodeName

    static func < (a: Key, b: Key) -> Bool {
      (a.object.rawValue, a.rel, a.node.level, a.node.prefix) < (b.object.rawValue, b.rel, b.node.level, b.node.prefix)
    }
  }

  var nodes: [Key: [UInt8]] = [:]
}

extension StoreKey {
  /// `members`, a long ordered list's count node: object, relationship, level, prefix.
  static func rankNode(_ o: ObjectID, _ rel: LinkSlot, _ node: OrderRanks.NodeName) -> StoreKey {
    var k = links(o, rel)
    k.u16(UInt16(node.level))
    k.u32(node.prefix)
    return k
  }
}

extension GraphReader {
  /// Calls `body` with the counts of a long list's node (a count by digit), as the commit
  /// left them so far; `nil` when the node does not exist.
  private func withRankNode<R>(
    _ o: ObjectID, _ rel: LinkSlot, _ node: OrderRanks.NodeName, _ body: ((Int) -> UInt32) throws -> R
  ) throws -> R? {
    if let bytes = pending?.nodes[PendingRanks.Key(object: o, rel: rel, node: node)] {
      return bytes.isEmpty ? nil : try body { OrderRanks.count(at: $0, in: bytes) }
    }
    return try txn.withValue(dbs.members, key: StoreKey.rankNode(o, rel, node)) { b -> R in
      guard b.count == OrderRanks.nodeSize else {
        throw StoreError.corrupt("\(display(o)): ordered list \(rel) has a count node of \(b.count) bytes")
      }
      return try body { KeyField.u32(b, at: $0 * 4) ?? 0 }
    }
  }

  /// The number of members of a list of `count` whose keys share `key`'s bucket.
  func bucketOccupancy(_ o: ObjectID, _ rel: LinkSlot, of key: UInt64, count: Int) throws -> Int {
    if count > OrderRanks.threshold {
      let node = OrderRanks.NodeName(level: 3, prefix: OrderRanks.prefix(key, level: 3))
      let digit = OrderRanks.digit(key, level: 3)
      return try withRankNode(o, rel, node) { Int($0(digit)) } ?? 0
    }
    let bucket = OrderRanks.bucket(key)
    var found = 0
    try txn.forEach(dbs.links, from: StoreKey.link(o, rel, order: bucket << 32)) { k, _ in
      guard KeyField.hasPrefix(k, StoreKey.links(o, rel)), let other = LinkEntry.last(k),
        OrderRanks.bucket(other) == bucket
      else { return false }
      found += 1
      return true
    }
    return found
  }

  /// The order key at `position` of a long list (more than `OrderRanks.threshold` members):
  /// four node reads and a walk inside one bucket.
  func rankedKey(_ o: ObjectID, _ rel: LinkSlot, at position: Int) throws -> UInt64 {
    var left = position
    var prefix: UInt32 = 0
    for level in 0..<OrderRanks.levels {
      let found = try withRankNode(o, rel, OrderRanks.NodeName(level: level, prefix: prefix)) { counts in
        var digit = 0
        while digit < 256, case let count = Int(counts(digit)), left >= count {
          left -= count
          digit += 1
        }
        return digit
      }
      guard let digit = found else {
        throw StoreError.corrupt("\(display(o)): ordered list \(rel) lacks the count node of position \(position)")
      }
      guard digit < 256 else {
        throw StoreError.corrupt("\(display(o)): ordered list \(rel) counts fewer members than position \(position)")
      }
      prefix = prefix << 8 | UInt32(digit)
    }
    var found: UInt64?
    try txn.forEach(dbs.links, from: StoreKey.link(o, rel, order: UInt64(prefix) << 32)) { k, _ in
      guard KeyField.hasPrefix(k, StoreKey.links(o, rel)), let key = LinkEntry.last(k) else { return false }
      if left == 0 { found = key }
      left -= 1
      return left >= 0
    }
    guard let found, OrderRanks.bucket(found) == UInt64(prefix) else {
      throw StoreError.corrupt("\(display(o)): ordered list \(rel) holds fewer members than its counts")
    }
    return found
  }

  /// The number of members of a long list whose keys are below `key`: four node reads and
  /// a walk inside one bucket.
  func rankedPosition(_ o: ObjectID, _ rel: LinkSlot, of key: UInt64) throws -> Int {
    var position = 0
    for level in 0..<OrderRanks.levels {
      let node = OrderRanks.NodeName(level: level, prefix: OrderRanks.prefix(key, level: level))
      let below = try withRankNode(o, rel, node) { counts in
        (0..<OrderRanks.digit(key, level: level)).reduce(0) { $0 + Int(counts($1)) }
      }
      guard let below else { break }
      position += below
    }
    let bucket = OrderRanks.bucket(key)
    try txn.forEach(dbs.links, from: StoreKey.link(o, rel, order: bucket << 32)) { k, _ in
      guard KeyField.hasPrefix(k, StoreKey.links(o, rel)), let other = LinkEntry.last(k), other < key else {
        return false
      }
      position += 1
      return true
    }
    return position
  }
}

extension GraphReader where T == WriteHandle {
  /// Counts a member's key in or out of a list that has `count` members after the change.
  ///
  /// A list that grows past the threshold gets its nodes from all its keys; one that
  /// shrinks to it loses them all.
  func countRank(_ o: ObjectID, _ rel: LinkSlot, key: UInt64, added: Bool, count: Int) throws {
    if added && count == OrderRanks.threshold + 1 {
      var keys: [UInt64] = []
      try forEachOrderKey(o, rel) { keys.append($0) }
      try writeRankNodes(o, rel, OrderRanks.nodes(keys))
      return
    }
    if !added && count == OrderRanks.threshold {
      var keys: [UInt64] = [key]
      try forEachOrderKey(o, rel) { keys.append($0) }
      for node in OrderRanks.nodes(keys).keys { try setNode(o, rel, node, nil) }
      return
    }
    guard count > OrderRanks.threshold else { return }
    try adjustRank(o, rel, key: key, by: added ? 1 : -1)
  }

  /// Adds `delta` (1 or −1) to the counts of `key` in a long list's nodes.
  func adjustRank(_ o: ObjectID, _ rel: LinkSlot, key: UInt64, by delta: Int) throws {
    for level in 0..<OrderRanks.levels {
      let node = OrderRanks.NodeName(level: level, prefix: OrderRanks.prefix(key, level: level))
      let digit = OrderRanks.digit(key, level: level)
      guard let pending else {
        var bytes = try storedNodeBytes(o, rel, node) ?? []
        guard OrderRanks.add(delta, at: digit, in: &bytes) else { throw noMember(o, rel) }
        try setNode(o, rel, node, bytes.isEmpty ? nil : bytes)
        continue
      }
      // In place in the pending node, read from the store the first time.
      let k = PendingRanks.Key(object: o, rel: rel, node: node)
      if pending.nodes[k] == nil { pending.nodes[k] = try storedNodeBytes(o, rel, node) ?? [] }
      guard OrderRanks.add(delta, at: digit, in: &pending.nodes[k, default: []]) else { throw noMember(o, rel) }
    }
  }

  private func noMember(_ o: ObjectID, _ rel: LinkSlot) -> StoreError {
    StoreError.corrupt("\(display(o)): ordered list \(rel) counts no member where one is removed")
  }

  /// Writes the nodes of a list.
  func writeRankNodes(_ o: ObjectID, _ rel: LinkSlot, _ nodes: [OrderRanks.NodeName: [UInt32]]) throws {
    for (node, counts) in nodes.sorted(by: { $0.key < $1.key }) { try setNode(o, rel, node, OrderRanks.encode(counts)) }
  }

  /// Writes the count nodes a commit changed (``PendingRanks``), in key order.
  func flushRanks() throws {
    guard let pending, !pending.nodes.isEmpty else { return }
    for (k, bytes) in pending.nodes.sorted(by: { $0.key < $1.key }) {
      let key = StoreKey.rankNode(k.object, k.rel, k.node)
      if bytes.isEmpty {
        _ = try txn.delete(dbs.members, key: key)
      } else {
        try txn.put(dbs.members, key: key, value: bytes)
      }
    }
    pending.nodes.removeAll(keepingCapacity: true)
  }

  /// A node's bytes in the store (the pending ones are the caller's to look at first);
  /// `nil` when it does not exist.
  private func storedNodeBytes(_ o: ObjectID, _ rel: LinkSlot, _ node: OrderRanks.NodeName) throws -> [UInt8]? {
    guard let bytes = try txn.get(dbs.members, key: StoreKey.rankNode(o, rel, node)) else { return nil }
    guard bytes.count == OrderRanks.nodeSize else {
      throw StoreError.corrupt("\(display(o)): ordered list \(rel) has a count node of \(bytes.count) bytes")
    }
    return bytes
  }

  /// Sets a node (`nil`: removes it): kept for the end of the commit when the reader has
  /// ``PendingRanks``, written at once otherwise.
  private func setNode(_ o: ObjectID, _ rel: LinkSlot, _ node: OrderRanks.NodeName, _ bytes: [UInt8]?) throws {
    if let pending {
      pending.nodes[PendingRanks.Key(object: o, rel: rel, node: node)] = bytes ?? []
    } else if let bytes {
      try txn.put(dbs.members, key: StoreKey.rankNode(o, rel, node), value: bytes)
    } else {
      _ = try txn.delete(dbs.members, key: StoreKey.rankNode(o, rel, node))
    }
  }

  private func forEachOrderKey(_ o: ObjectID, _ rel: LinkSlot, _ body: (UInt64) -> Void) throws {
    let prefix = StoreKey.links(o, rel)
    try txn.forEach(dbs.links, from: prefix) { k, _ in
      guard KeyField.hasPrefix(k, prefix), let key = LinkEntry.last(k) else { return false }
      body(key)
      return true
    }
  }
}
