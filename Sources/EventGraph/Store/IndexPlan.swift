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
  /// served as `age == 30` is.
  ///
  /// A personal attribute's index holds blind hashes (Docs/privacy.md): only an equality
  /// or an `IN` is served by it, through `blind`, which hashes a plain value as the store
  /// does; a range, a prefix or a store without its key scans and decrypts.
  static func choose(
    _ p: QueryPredicate, entity: Entity, variables: [String: Value] = [:], blind: BlindHashing? = nil
  ) -> [IndexPlan]? {
    switch p.kind {
    case .comparison(let c): return plan(c, entity, variables, blind).map { [$0] }
    case .and(let clauses):
      let plans = clauses.compactMap { choose($0, entity: entity, variables: variables, blind: blind) }
      return plans.min { rank($0) < rank($1) }
    case .or(let clauses):
      var union: [IndexPlan] = []
      for clause in clauses {
        guard let plans = choose(clause, entity: entity, variables: variables, blind: blind) else { return nil }
        union += plans
      }
      return union.isEmpty ? nil : union
    default: return nil
    }
  }

  private static func rank(_ plans: [IndexPlan]) -> Int {
    guard plans.count == 1, let p = plans.first else { return 4 + plans.count }
    if p.ranges.allSatisfy({ $0.low != nil && $0.low == $0.high }) { return p.ranges.count == 1 ? 0 : 1 }
    return p.ranges.allSatisfy({ $0.low != nil && $0.high != nil }) ? 2 : 3
  }

  /// The blind hash of a plain value of a personal attribute.
  typealias BlindHashing = (Value) -> [UInt8]

  private static func plan(
    _ c: QueryComparison, _ entity: Entity, _ variables: [String: Value], _ blind: BlindHashing?
  ) -> IndexPlan? {
    guard c.quantifier == nil, c.options.isEmpty else { return nil }
    var op = c.op
    var keyPath = c.left
    var other = c.right
    if constant(c.left, variables) != nil, case .keyPath(let p) = c.right.kind, p.variable == nil {
      keyPath = c.right
      other = c.left
      switch op {
      case .less: op = .greater
      case .lessOrEqual: op = .greaterOrEqual
      case .greater: op = .less
      case .greaterOrEqual: op = .lessOrEqual
      case .equal: break
      default: return nil
      }
    }
    guard case .keyPath(let path) = keyPath.kind, path.variable == nil, path.components.count == 1,
      case .property(let name) = path.components[0], let a = entity.attribute(named: name), a.isIndexed
    else { return nil }
    if a.isPersonal {
      guard blind != nil, op == .equal || op == .in else { return nil }
    }
    func key(_ v: Value) -> [UInt8] {
      guard a.isPersonal, let blind else { return IndexKey.encode(v) }
      return IndexKey.encode(
        .sealed(SealedValue(type: a.type, subject: ObjectID(0), blindHash: blind(v), ciphertext: [])))
    }
    func encoded(_ e: QueryExpression) -> [UInt8]? {
      switch constant(e, variables) {
      case .literal(let l): value(l, a.type).map(key)
      case .bound(let v): value(v, a.type).map(key)
      case nil: nil
      }
    }
    switch op {
    case .equal:
      guard let v = encoded(other) else { return nil }
      return IndexPlan(attribute: a, ranges: [(v, v)])
    case .less, .lessOrEqual:
      guard let v = encoded(other) else { return nil }
      return IndexPlan(attribute: a, ranges: [(nil, v)])
    case .greater, .greaterOrEqual:
      guard let v = encoded(other) else { return nil }
      return IndexPlan(attribute: a, ranges: [(v, nil)])
    case .between:
      guard case .list(let items) = other.kind, items.count == 2, let lo = encoded(items[0]), let hi = encoded(items[1])
      else { return nil }
      return IndexPlan(attribute: a, ranges: [(lo, hi)])
    case .beginsWith:
      // Every string with the prefix: its key starts with the prefix's bytes (in normal form
      // C, as the index holds strings), which no content byte of 0xFF can follow.
      let prefix: String? =
        switch constant(other, variables) {
        case .literal(.string(let p)), .bound(.string(let p)): p
        default: nil
        }
      guard a.type == .string, let p = prefix else { return nil }
      let low = IndexKey.prefixBytes(p)
      return IndexPlan(attribute: a, ranges: [(low, low + [0xFF])])
    case .in:
      guard case .list(let items) = other.kind else { return nil }
      let points = items.compactMap(encoded)
      guard points.count == items.count else { return nil }
      return IndexPlan(attribute: a, ranges: points.map { ($0, $0) })
    default:
      return nil
    }
  }

  /// A comparison's constant side: a literal, or a `$variable` alone with its bound value.
  private enum Constant {
    case literal(QueryLiteral)
    case bound(Value)
  }

  private static func constant(_ e: QueryExpression, _ variables: [String: Value]) -> Constant? {
    switch e.kind {
    case .literal(let l): return .literal(l)
    case .keyPath(let p):
      guard let name = p.variable, p.components.isEmpty, let v = variables[name] else { return nil }
      return .bound(v)
    default: return nil
    }
  }

  /// A variable's value as a value of the attribute's type, when it converts exactly.
  ///
  /// The same type, or an integer that fits the attribute's integer type, a decimal, or a
  /// double (up to 2^53). Anything else (a double against an integer, a string against a date)
  /// leaves the comparison to the evaluator on every object.
  private static func value(_ v: Value, _ type: AttributeType) -> Value? {
    if v.type == type { return v.isFinite ? v : nil }
    let n: Int64
    switch v {
    case .int16(let x): n = Int64(x)
    case .int32(let x): n = Int64(x)
    case .int64(let x): n = x
    default: return nil
    }
    switch type {
    case .int16, .int32, .int64, .decimal: return try? v.converted(to: type)
    case .double: return n.magnitude <= 1 << 53 ? .double(Double(n)) : nil
    default: return nil
    }
  }

  /// A literal as a value of the attribute's type, when it converts exactly.
  private static func value(_ l: QueryLiteral, _ type: AttributeType) -> Value? {
    switch (l, type) {
    case (.string(let s), .string): return .string(s)
    case (.boolean(let b), .boolean): return .boolean(b)
    case (.integer(let n), _) where type.isNumeric: return try? Value.int64(n).converted(to: type)
    case (.double(let d), .double), (.double(let d), .float):
      return try? Value.double(d).converted(to: type)
    case (.double(let d), .decimal):
      // As the evaluator reads a literal for a decimal: from its shortest text, so 0.1 is 0.1.
      return Decimal(string: "\(d)", locale: Locale(identifier: "en_US_POSIX")).map { .decimal($0) }
    default: return nil
    }
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
