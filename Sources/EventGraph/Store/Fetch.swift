import Foundation
internal import LMDB

/// How to order fetched objects: by an attribute, or a key path through to-one
/// relationships to one (`company.name`), ascending or descending.
///
/// Objects without a value (or with an empty relationship on the way) come first
/// (ascending) or last (descending); ties keep identity order.
public struct SortDescriptor: Sendable, Hashable {
  public var key: String
  public var ascending: Bool

  public init(_ key: String, ascending: Bool = true) {
    self.key = key
    self.ascending = ascending
  }

  /// Parses `name`, `name asc` or `name desc` (or `-name` for descending).
  public init?(parsing text: String) {
    let parts = text.split(separator: " ").map(String.init)
    guard let first = parts.first, parts.count <= 2 else { return nil }
    if first.hasPrefix("-") {
      self.init(String(first.dropFirst()), ascending: false)
    } else {
      switch parts.count == 2 ? parts[1].lowercased() : "asc" {
      case "asc", "ascending": self.init(first, ascending: true)
      case "desc", "descending": self.init(first, ascending: false)
      default: return nil
      }
    }
  }
}

/// What a fetch did: the objects, and whether an index chose the candidates.
public struct FetchResult: Sendable, Hashable {
  public var objects: [ObjectID]
  /// The indexed attribute whose range gave the candidates (several, `name, age`, for the
  /// union an `OR` reads), or `nil` for a scan.
  public var index: String?
  /// How many objects the predicate was evaluated on.
  public var examined: Int
}

/// A query source over a snapshot's projection that decodes each object once per fetch step.
///
/// Personal values are opened with the store's keys before a predicate or a sort sees them
/// (a scan decrypts, Docs/privacy.md); an erased one reads as no value, and one the store
/// has no key for is refused rather than compared sealed.
final class ProjectionSource<T: TransactionReading>: QueryObjectSource {
  let reader: GraphReader<T>
  private var last: ObjectState?
  /// Whether every personal value of `last` was opened (a predicate opens only those it reads).
  private var lastOpened = false

  init(reader: GraphReader<T>) { self.reader = reader }

  /// `o`'s state as stored, with the personal values read so far opened.
  private func stored(_ o: ObjectID) throws -> ObjectState? {
    if let l = last, l.id == o { return l }
    last = try reader.object(o)
    lastOpened = reader.dbs.keyring == nil
    return last
  }

  /// `o`'s state with every personal value opened (what a typed fetch decodes).
  func state(_ o: ObjectID) throws -> ObjectState? {
    guard let s = try stored(o) else { return nil }
    if !lastOpened, let ring = reader.dbs.keyring {
      last = try ring.open(s, in: reader.txn)
      lastOpened = true
    }
    return last
  }

  func value(of object: ObjectID, attribute: PropertyID) throws -> Value? {
    let v = try stored(object)?[attribute]
    // Tested without a binding on the common path (a plain value), as RecordReader does.
    guard v?.isSealed == true else { return v }
    return try openedForQuery(v, attribute)
  }

  /// ``value(of:attribute:)`` of a sealed value, off the common path: opened with the
  /// store's key, `nil` once erased.
  @inline(never)
  private func openedForQuery(_ v: Value?, _ attribute: PropertyID) throws -> Value? {
    guard case .sealed(var s)? = v else { return v }
    if s.state == nil, let ring = reader.dbs.keyring {
      let opened = try ring.open(s, in: reader.txn)
      last?.set(attribute, opened)
      guard case .sealed(let marked) = opened else { return opened }
      s = marked
    }
    if s.state == .erased { return nil }
    throw StoreError.keyRequired(
      path: reader.dbs.keyring?.path ?? "", detail: "a query over personal values reads them opened")
  }

  func related(to object: ObjectID, relationship: PropertyID) throws -> [ObjectID] {
    try reader.related(object, relationship)
  }

  /// One place of an ordered list from its length and, in a long list, its counts
  /// (Projection/OrderedRanks.swift): a few reads whatever the list's length.
  func related(to object: ObjectID, relationship: PropertyID, at element: QueryElementIndex) throws -> ObjectID? {
    guard let entity = try reader.entity(of: object), let r = reader.model.entity(entity)?.property(relationship),
      case .relationship(let rel) = r.kind, rel.isOrdered
    else { return element.pick(try reader.related(object, relationship)) }
    let count = try reader.orderedCount(object, LinkSlot(relationship))
    let position: Int
    switch element {
    case .first: position = 0
    case .last: position = count - 1
    case .at(let n): position = n >= 0 && n < Int64(count) ? Int(n) : -1
    }
    guard position >= 0 && position < count else { return nil }
    return try reader.orderedSlice(object, LinkSlot(relationship), position..<(position + 1), count: count).first?
      .target
  }
}

extension Snapshot {
  /// The live objects of `entity` (sub-entities included) for which `predicate` holds,
  /// sorted, then `offset` skipped and at most `limit` kept.
  ///
  /// An equality, range, `BETWEEN`, `IN` or `BEGINSWITH` on an attribute declared `"indexed": true`
  /// (alone, as one clause of an `AND`, or every clause of an `OR`, whose ranges are read
  /// together) reads only that range of the index; the whole
  /// predicate is then checked on each candidate. Anything else scans the entity.
  ///
  /// `$variables` in the predicate take their values from `variables`, each typed by its
  /// value (`["min": .int64(3)]` for `age >= $min`); one not given is refused as unknown.
  /// They are bound before the index is chosen: `age >= $min` reads the index as `age >= 3`.
  ///
  /// With a limit and a sort by one indexed attribute (and no index range from the
  /// predicate), the index gives the order and the fetch stops once the page is full
  /// (`Fetch+IndexOrder.swift`).
  ///
  /// - Throws: ``QueryError`` for a predicate that does not parse or type-check (with its
  ///   position), ``StoreError`` for an unknown entity or sort key.
  public func fetch(
    _ entity: String, where predicate: String? = nil, variables: [String: Value] = [:],
    sortedBy sort: [SortDescriptor] = [], limit: Int? = nil, offset: Int = 0
  ) throws -> FetchResult {
    guard let e = model.entity(named: entity) else { throw StoreError.unknownEntity(entity) }
    let found = try fetch(
      e, where: predicate, variables: variables, sortedBy: sort, limit: limit, offset: offset, keepingStates: false)
    return FetchResult(objects: found.objects, index: found.index, examined: found.examined)
  }

  /// The fetch of ``fetch(_:where:variables:sortedBy:limit:offset:)`` for an entity, with
  /// the states of the objects it gives when `keepingStates` (what a typed fetch decodes,
  /// so that no object is read twice).
  func fetch(
    _ e: Entity, where predicate: String?, variables: [String: Value], sortedBy sort: [SortDescriptor],
    limit: Int?, offset: Int, keepingStates: Bool
  ) throws -> (objects: [ObjectID], states: [ObjectState], index: String?, examined: Int) {
    let plan = try FetchPlan(e, where: predicate, variables: variables, in: self)
    let sortKeys = try sort.map { d in (try SortPath(d.key, from: e, in: model), d.ascending) }
    let source = plan.source
    // No range to read: the sort's index may give the page in order, and stop early.
    if plan.ranges == nil,
      let served = try fetchInIndexOrder(e, sortKeys, limit: limit, offset: offset, matches: plan.matches)
    {
      let states = keepingStates ? try served.objects.compactMap { try source.state($0) } : []
      return (served.objects, states, sortKeys.first?.0.attribute.name, served.examined)
    }
    let candidates = try plan.candidates()
    var matches: [ObjectID] = []
    var states: [ObjectState] = []
    for o in candidates {
      guard let state = try plan.matchingState(o) else { continue }
      matches.append(o)
      if keepingStates { states.append(state) }
    }
    var order = Array(matches.indices)
    if !sortKeys.isEmpty {
      let keys = try matches.map { o in try sortKeys.map { try $0.0.value(of: o, in: source) } }
      order.sort { a, b in
        for (i, (_, ascending)) in sortKeys.enumerated() {
          let c = ValueOrder.compare(keys[a][i], keys[b][i])
          if c != 0 { return ascending ? c < 0 : c > 0 }
        }
        return matches[a] < matches[b]
      }
    }
    let page = order.dropFirst(max(0, offset)).prefix(limit.map { max(0, $0) } ?? Int.max)
    return (page.map { matches[$0] }, keepingStates ? page.map { states[$0] } : [], plan.index, candidates.count)
  }
}

extension EventStore {
  /// ``Snapshot/fetch(_:where:variables:sortedBy:limit:offset:)->FetchResult`` in its own snapshot.
  public func fetch(
    _ entity: String, where predicate: String? = nil, variables: [String: Value] = [:],
    sortedBy sort: [SortDescriptor] = [], limit: Int? = nil, offset: Int = 0
  ) throws -> FetchResult {
    try read {
      try $0.fetch(entity, where: predicate, variables: variables, sortedBy: sort, limit: limit, offset: offset)
    }
  }
}

/// The order of sort keys: nil first, numbers numerically, strings as Swift orders them.
enum ValueOrder {
  static func compare(_ a: Value?, _ b: Value?) -> Int {
    switch (a, b) {
    case (nil, nil): return 0
    case (nil, _): return -1
    case (_, nil): return 1
    case (.some(let x), .some(let y)):
      if let p = x.doubleValue, let q = y.doubleValue { return p < q ? -1 : p > q ? 1 : 0 }
      switch (x, y) {
      case (.string(let p), .string(let q)), (.uri(let p), .uri(let q)): return p < q ? -1 : p == q ? 0 : 1
      case (.date(let p), .date(let q)): return p < q ? -1 : p > q ? 1 : 0
      case (.boolean(let p), .boolean(let q)): return p == q ? 0 : (p ? 1 : -1)
      default:
        let p = IndexKey.encode(x)
        let q = IndexKey.encode(y)
        return p.lexicographicallyPrecedes(q) ? -1 : (p == q ? 0 : 1)
      }
    }
  }
}
