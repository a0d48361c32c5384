import Foundation
internal import LMDB

/// A range of one attribute index that holds every object a predicate can match.
struct IndexPlan {
  let attribute: Attribute
  /// Encoded bounds, inclusive; `nil` is open.
  ///
  /// Several points for `IN`.
  let ranges: [(low: [UInt8]?, high: [UInt8]?)]

  /// The best index ranges for a predicate on `entity`, or `nil` when none applies.
  ///
  /// Their objects together hold every object the predicate can match. An equality beats
  /// `IN`, which beats a range, which beats a union. An `OR` is served when each of its
  /// clauses is, by the union of their ranges (on one attribute or several); an `AND` by its
  /// best clause. A `$variable` is read as its value in `variables`, so `age == $a` is
  /// served as `age == 30` is (the query module reads the predicate: ``IndexCondition``).
  ///
  /// A personal attribute's index holds blind hashes (Docs/privacy.md): only an equality
  /// or an `IN` is served by it, through `blind`, which hashes a plain value as the store
  /// does; a range, a prefix or a store without its key scans and decrypts.
  static func choose(
    _ p: CompiledPredicate, entity: Entity, variables: [String: Value] = [:], blind: BlindHashing? = nil
  ) -> [IndexPlan]? {
    p.indexCondition(in: entity, variables: variables).flatMap { choose($0, entity, blind: blind) }
  }

  private static func choose(_ condition: IndexCondition, _ entity: Entity, blind: BlindHashing?) -> [IndexPlan]? {
    switch condition {
    case .range(let id, let range):
      guard let a = entity.attribute(id) else { return nil }
      return plan(a, range, blind).map { [$0] }
    case .points(let id, let points):
      guard let a = entity.attribute(id), let keys = keys(a, blind) else { return nil }
      // Each point's two bounds are one key, encoded once.
      let encoded = points.map(keys)
      return [IndexPlan(attribute: a, ranges: encoded.map { ($0, $0) })]
    case .prefix(let id, let p):
      guard let a = entity.attribute(id) else { return nil }
      // Every string with the prefix: its key starts with the prefix's bytes (in normal form
      // C, as the index holds strings), which no content byte of 0xFF can follow.
      guard a.isIndexed, !a.isPersonal else { return nil }
      let low = IndexKey.prefixBytes(p)
      return [IndexPlan(attribute: a, ranges: [(low, low + [0xFF])])]
    case .and(let clauses):
      let plans = clauses.compactMap { choose($0, entity, blind: blind) }
      return plans.min { rank($0) < rank($1) }
    case .or(let clauses):
      var union: [IndexPlan] = []
      for clause in clauses {
        guard let plans = choose(clause, entity, blind: blind) else { return nil }
        union += plans
      }
      return union.isEmpty ? nil : union
    }
  }

  private static func rank(_ plans: [IndexPlan]) -> Int {
    guard plans.count == 1, let p = plans.first else { return 4 + plans.count }
    if p.ranges.allSatisfy({ $0.low != nil && $0.low == $0.high }) { return p.ranges.count == 1 ? 0 : 1 }
    return p.ranges.allSatisfy({ $0.low != nil && $0.high != nil }) ? 2 : 3
  }

  /// The blind hash of a plain value of a personal attribute.
  typealias BlindHashing = (Value) -> [UInt8]

  /// How values of `a` are encoded as its index's keys, or `nil` when its index cannot
  /// serve points: not indexed, or personal without the store's key.
  private static func keys(_ a: Attribute, _ blind: BlindHashing?) -> ((Value) -> [UInt8])? {
    guard a.isIndexed else { return nil }
    guard a.isPersonal else { return { IndexKey.encode($0) } }
    // A blind hash keeps equality only: points, through the store's key.
    guard let blind else { return nil }
    return { v in
      IndexKey.encode(.sealed(SealedValue(type: a.type, subject: ObjectID(0), blindHash: blind(v), ciphertext: [])))
    }
  }

  private static func plan(_ a: Attribute, _ range: IndexRange, _ blind: BlindHashing?) -> IndexPlan? {
    if a.isPersonal, !range.isPoint { return nil }
    guard let key = keys(a, blind) else { return nil }
    if range.isPoint, let v = range.low {
      // A point's two bounds are one key, encoded once.
      let k = key(v)
      return IndexPlan(attribute: a, ranges: [(k, k)])
    }
    return IndexPlan(attribute: a, ranges: [(range.low.map(key), range.high.map(key))])
  }

  /// The objects in the ranges of every plan, for each of `kinds` (the entity and its
  /// sub-entities), in identity order without repeats.
  static func candidates<T: TransactionReading>(_ plans: [IndexPlan], reader: GraphReader<T>, kinds: [EntityID])
    throws -> [ObjectID]
  {
    // An array sorted once, repeats dropped after: cheaper than a set's hashing per object
    // (a range of one index gives its objects without repeats, often already in order).
    var found: [ObjectID] = []
    for plan in plans { try plan.collect(into: &found, reader: reader, kinds: kinds) }
    found.sort()
    var unique: [ObjectID] = []
    unique.reserveCapacity(found.count)
    for o in found where unique.last != o { unique.append(o) }
    return unique
  }

  private func collect<T: TransactionReading>(
    into found: inout [ObjectID], reader: GraphReader<T>, kinds: [EntityID]
  )
    throws
  {
    for kind in kinds {
      let prefix = IndexKey.prefix(entity: kind, attribute: attribute.id)
      for (low, high) in ranges {
        try reader.txn.forEach(reader.dbs.index, from: prefix + (low ?? [])) { key, _ in
          guard key.count >= prefix.count + 8, key.starts(with: prefix) else { return false }
          let value = key[prefix.count..<(key.count - 8)]
          if let high, high.lexicographicallyPrecedes(value) { return false }
          if let o = KeyField.u64(key, at: key.count - 8) { found.append(ObjectID(o)) }
          return true
        }
      }
    }
  }
}
