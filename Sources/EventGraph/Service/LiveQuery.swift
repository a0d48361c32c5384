import EventGraphQuery
import Foundation

// Live queries (Docs/services.md, "Live queries"): a fetch kept current from the log.
// Each step reads, in one snapshot, the commits landed since the last and — only when their
// events show the result may have changed — the query again, then tells the difference.
// Reading both in one snapshot makes the result exactly the state after the last commit
// read, so no commit is seen twice or missed between a result and the next.

/// How a query's result differs from the one before: positions to remove from the old
/// result, to insert into the new one, objects that stayed but moved among the others,
/// and objects that stayed whose state changed.
///
/// Applied in that order — removals (and the moved objects' old places) from the old
/// result, then insertions and the moved objects at their new places — the old result
/// becomes the new one (``apply(to:inserting:)``), as a table view's batch updates do.
public struct ResultChanges: Sendable, Hashable {
  /// A move of an object that stayed: from its place in the old result to its place in the new.
  public struct Move: Sendable, Hashable {
    public var from: Int
    public var to: Int
  }

  /// Places in the old result of the objects no longer in it, ascending.
  public var removed: [Int] = []
  /// Places in the new result of the objects not in the old one, ascending.
  public var inserted: [Int] = []
  /// Objects in both whose place relative to the others changed (the fewest that explain
  /// the new order), by their new place.
  public var moved: [Move] = []
  /// Places in the new result of objects in both that a commit since changed, moved or not.
  public var updated: [Int] = []

  /// Whether nothing changed.
  public var isEmpty: Bool { removed.isEmpty && inserted.isEmpty && moved.isEmpty && updated.isEmpty }

  /// The new result, made from the old by these changes; `inserting` gives the object at
  /// each inserted place (the new result's).
  public func apply(to old: [ObjectID], inserting: (Int) -> ObjectID) -> [ObjectID] {
    let gone = Set(removed).union(moved.map(\.from))
    var staying = old.indices.lazy.filter { !gone.contains($0) }.map { old[$0] }.makeIterator()
    var placed: [Int: ObjectID] = [:]
    for i in inserted { placed[i] = inserting(i) }
    for m in moved { placed[m.to] = old[m.from] }
    let count = old.count - removed.count + inserted.count
    var new: [ObjectID] = []
    new.reserveCapacity(count)
    for i in 0..<count {
      if let o = placed[i] {
        new.append(o)
      } else if let o = staying.next() {
        new.append(o)
      }
    }
    return new
  }

  /// The changes from `old` to `new`, with `touched` the objects commits changed.
  static func between(_ old: [ObjectID], _ new: [ObjectID], touched: Set<ObjectID>) -> ResultChanges {
    var changes = ResultChanges()
    var oldPlace: [ObjectID: Int] = [:]
    oldPlace.reserveCapacity(old.count)
    for (i, o) in old.enumerated() { oldPlace[o] = i }
    let newSet = Set(new)
    changes.removed = old.indices.filter { !newSet.contains(old[$0]) }
    // The objects in both, in their new order, with their old places: the longest run of
    // old places that increases stays put; every other one moved.
    var both: [(new: Int, old: Int)] = []
    for (i, o) in new.enumerated() {
      if let j = oldPlace[o] {
        both.append((i, j))
        if touched.contains(o) { changes.updated.append(i) }
      } else {
        changes.inserted.append(i)
      }
    }
    let kept = Self.longestIncreasing(both.map(\.old))
    for (k, pair) in both.enumerated() where !kept.contains(k) {
      changes.moved.append(Move(from: pair.old, to: pair.new))
    }
    return changes
  }

  /// The indices of a longest strictly increasing subsequence of `values` (patience sorting, O(n log n)).
  private static func longestIncreasing(_ values: [Int]) -> Set<Int> {
    var tails: [Int] = []  // index into values of the smallest tail of each length
    var previous = [Int](repeating: -1, count: values.count)
    for (i, v) in values.enumerated() {
      var lo = 0
      var hi = tails.count
      while lo < hi {
        let mid = (lo + hi) / 2
        if values[tails[mid]] < v { lo = mid + 1 } else { hi = mid }
      }
      if lo > 0 { previous[i] = tails[lo - 1] }
      if lo == tails.count { tails.append(i) } else { tails[lo] = i }
    }
    var kept = Set<Int>()
    var at = tails.last ?? -1
    while at >= 0 {
      kept.insert(at)
      at = previous[at]
    }
    return kept
  }
}

/// A live query's result: the objects, how they differ from the result before, and the
/// log's position they are as of.
public struct LiveResult: Sendable, Hashable {
  /// The objects matching, in the query's order.
  public let objects: [ObjectID]
  /// The difference from the result yielded before; for the first, every object inserted.
  public let changes: ResultChanges
  /// The log's last sequence when the result was read: it holds every commit up to it.
  public let sequence: UInt64
}

/// What a live query watches in the commits' events to tell whether its result may have
/// changed.
struct LiveWatch: Sendable {
  /// The entity fetched and its sub-entities.
  let entities: Set<EntityID>
  /// The attributes the predicate and the sort read, when those are all they read;
  /// `nil` when they read relationships or other objects: then every commit may change it.
  let attributes: Set<PropertyID>?
  /// The predicate, compiled once, and its variables.
  let compiled: CompiledPredicate?
  let bindings: [String: QueryVariable<ObjectID>]
  /// The sort keys, resolved (the same as the fetch's), and their directions.
  let sort: [(path: SortPath, ascending: Bool)]
  let ascending: [Bool]

  init(_ entity: Entity, predicate: String?, variables: [String: Value], sort: [SortDescriptor], model: Model) throws {
    entities = Set([entity.id] + model.descendants(of: entity.id))
    var read: Set<PropertyID>? = []
    compiled = try predicate.map {
      try CompiledPredicate.compile(
        $0, entity: entity.id, model: model, variables: variables.mapValues { QueryType.value($0.type) })
    }
    if let compiled { read = compiled.ownAttributes(constants: Set(variables.keys)) }
    bindings = variables.mapValues { QueryVariable<ObjectID>.value($0) }
    self.sort = try sort.map { (try SortPath($0.key, from: entity, in: model), $0.ascending) }
    ascending = sort.map(\.ascending)
    for s in self.sort {
      guard s.path.relationships.isEmpty else {
        read = nil
        break
      }
      read?.insert(s.path.attribute.id)
    }
    attributes = read
  }

  /// What `commits` did to a result that holds `current`: whether they may have changed
  /// it, the objects of `current` they changed, and the other objects of the entity they
  /// made or changed in what the query reads (which may now match).
  func scan(_ commits: [Commit], current: (ObjectID) -> Bool, _ reader: GraphReader<ReadHandle>) throws -> Scan {
    // A predicate or sort that reads other objects may change with any commit.
    var relevant = attributes == nil && !commits.isEmpty
    var touched = Set<ObjectID>()
    var entering = Set<ObjectID>()
    var made: [ObjectID: EntityID] = [:]
    var erased = false
    for commit in commits {
      for event in commit.events {
        let o = event.object
        // A link changes both ends: the target's list (or inverse) too.
        switch event {
        case .link(_, _, let t, _), .unlink(_, _, let t):
          if current(t) {
            relevant = true
            touched.insert(t)
          }
        default: break
        }
        if current(o) {
          relevant = true
          touched.insert(o)
          continue
        }
        guard attributes != nil else { continue }
        switch event {
        case .insert(_, let e):
          made[o] = e
          if entities.contains(e) {
            relevant = true
            entering.insert(o)
          }
        case .set(_, let a, _):
          // A property's id is the same in every entity that has it: a cheap test first.
          guard attributes?.contains(a) ?? true, !entering.contains(o) else { continue }
          if let e = try made[o] ?? reader.entity(of: o), entities.contains(e) {
            relevant = true
            entering.insert(o)
          }
        case .link, .unlink, .delete:
          // Of an object outside the result: its own attributes are what the query reads.
          break
        case .erase:
          // Erased values read as no value: any object of the subject may leave or enter.
          relevant = true
          erased = true
        }
      }
    }
    return Scan(relevant: relevant, touched: touched, entering: entering, erased: erased)
  }

  /// ``scan(_:current:_:)`` of the commits after `position` up to `end`, read from the log
  /// a few hundred at a time (the result, not the log, is what a live query holds).
  func scan(
    _ reader: GraphReader<ReadHandle>, after position: UInt64, through end: UInt64, current: (ObjectID) -> Bool
  )
    throws -> Scan
  {
    var seen = Scan(relevant: false, touched: [], entering: [], erased: false)
    var after = position
    while after < end {
      let commits = try reader.commits(after: after, maxCommits: 256, maxEvents: 100_000)
      guard let last = commits.last else { break }
      let more = try scan(commits, current: current, reader)
      seen.relevant = seen.relevant || more.relevant
      seen.erased = seen.erased || more.erased
      seen.touched.formUnion(more.touched)
      seen.entering.formUnion(more.entering)
      after = last.lastSequence
    }
    return seen
  }

  /// What ``scan(_:current:_:)`` found.
  struct Scan {
    var relevant: Bool
    var touched: Set<ObjectID>
    var entering: Set<ObjectID>
    /// Whether a subject was erased: the objects whose values it held are not named.
    var erased: Bool
  }

  /// The sort values of `o`, in the order of the sort keys.
  func keys(of o: ObjectID, in source: ProjectionSource<ReadHandle>) throws -> [Value?] {
    try sort.map { try $0.path.value(of: o, in: source) }
  }

  /// Whether (`a`, `aKeys`) comes before (`b`, `bKeys`) in the query's order: the sort
  /// keys, then identity, as a fetch orders.
  func precedes(_ a: ObjectID, _ aKeys: [Value?], _ b: ObjectID, _ bKeys: [Value?]) -> Bool {
    for i in ascending.indices {
      let c = ValueOrder.compare(aKeys[i], bKeys[i])
      if c != 0 { return ascending[i] ? c < 0 : c > 0 }
    }
    return a < b
  }
}

/// A live query's position and result, and its step: shared by the dynamic and the typed
/// form, which differ in what they read with the objects.
struct LiveState {
  private(set) var current: [ObjectID]?
  /// The objects of `current`, to look them up.
  private var members = Set<ObjectID>()
  private(set) var position: UInt64 = 0
  private(set) var evaluations = 0

  /// Reads the commits landed since the last result and, when they may have changed it,
  /// the query again through `evaluate` in the same snapshot: the new result and what
  /// `evaluate` read with it when it differs (always the first time), `nil` otherwise.
  mutating func step<Payload>(
    _ store: EventStore, _ watch: LiveWatch, evaluate: (Snapshot) throws -> ([ObjectID], Payload)
  ) throws -> (result: LiveResult, payload: Payload)? {
    let known = current
    let from = position
    let outcome = try store.read {
      snapshot -> (read: ([ObjectID], Payload)?, touched: Set<ObjectID>, end: UInt64, ran: Bool) in
      let reader = snapshot.reader
      let end = try reader.logEnd().sequence
      guard known != nil else { return (try evaluate(snapshot), [], end, true) }
      let seen = try watch.scan(reader, after: from, through: end) { members.contains($0) }
      guard seen.relevant else { return (nil, [], end, false) }
      return (try evaluate(snapshot), seen.touched, end, true)
    }
    position = outcome.end
    if outcome.ran { evaluations += 1 }
    guard let (objects, payload) = outcome.read else { return nil }
    current = objects
    members = Set(objects)
    guard let known else {
      let all = ResultChanges(inserted: Array(objects.indices))
      return (LiveResult(objects: objects, changes: all, sequence: outcome.end), payload)
    }
    let changes = ResultChanges.between(known, objects, touched: outcome.touched)
    guard !changes.isEmpty else { return nil }
    return (LiveResult(objects: objects, changes: changes, sequence: outcome.end), payload)
  }
}

extension EventStore {
  /// Runs `step` until it gives something, waiting for the log's notifier between tries
  /// (commits of this process wake it at once, other processes' through inotify).
  ///
  /// - Throws: `CancellationError` when the task is cancelled; what `step` throws.
  func untilChanged<T>(_ step: () throws -> T?) async throws -> T {
    while true {
      try Task.checkCancellation()
      let generation = service.notifier.generation
      if let found = try step() { return found }
      try await service.notifier.wait(after: generation)
    }
  }
}

/// A live result kept by applying each commit's changes to it.
///
/// For a query whose predicate and sort read the entity's own attributes, the objects a
/// commit names or makes are tested again, one by one, and moved into place by binary
/// search; the rest of the result is not read. Anything else (an erasure) runs the query
/// again.
struct IncrementalResult {
  private(set) var objects: [ObjectID] = []
  /// Each object's sort values, by place, and by object.
  private var keys: [[Value?]] = []
  private var keyOf: [ObjectID: [Value?]] = [:]
  private(set) var position: UInt64 = 0
  private(set) var evaluations = 0
  private var started = false

  /// ``LiveState/step(_:_:evaluate:)`` for the dynamic query, applied incrementally.
  mutating func step(_ q: ObservedQuery) throws -> LiveResult? {
    let watch = q.watch
    let outcome = try q.store.read { snapshot -> (LiveResult?, UInt64, Bool) in
      let reader = snapshot.reader
      let end = try reader.logEnd().sequence
      let source = ProjectionSource(reader: reader)
      guard started else {
        try reset(try q.evaluate(snapshot), watch, source)
        return (
          LiveResult(objects: objects, changes: ResultChanges(inserted: Array(objects.indices)), sequence: end), end,
          true
        )
      }
      let seen = try watch.scan(reader, after: position, through: end) { keyOf[$0] != nil }
      guard seen.relevant else { return (nil, end, false) }
      if seen.erased {
        let old = objects
        try reset(try q.evaluate(snapshot), watch, source)
        let changes = ResultChanges.between(old, objects, touched: seen.touched)
        return (changes.isEmpty ? nil : LiveResult(objects: objects, changes: changes, sequence: end), end, true)
      }
      let changes = try apply(seen, watch, source)
      return (changes.isEmpty ? nil : LiveResult(objects: objects, changes: changes, sequence: end), end, true)
    }
    started = true
    position = outcome.1
    if outcome.2 { evaluations += 1 }
    return outcome.0
  }

  /// Takes `objects`, a fresh result, with their sort values.
  private mutating func reset(_ fresh: [ObjectID], _ watch: LiveWatch, _ source: ProjectionSource<ReadHandle>)
    throws
  {
    objects = fresh
    keys = try fresh.map { try watch.keys(of: $0, in: source) }
    keyOf = Dictionary(uniqueKeysWithValues: zip(fresh, keys))
  }

  /// The place where (`o`, `k`) is or would go.
  private func place(of o: ObjectID, _ k: [Value?], _ watch: LiveWatch) -> Int {
    keys.withUnsafeBufferPointer { keys in
      objects.withUnsafeBufferPointer { objects in
        var lo = 0
        var hi = objects.count
        while lo < hi {
          let mid = (lo + hi) / 2
          if watch.precedes(objects[mid], keys[mid], o, k) { lo = mid + 1 } else { hi = mid }
        }
        return lo
      }
    }
  }

  /// Tests again every object the commits named or made, moves each into or out of place,
  /// and tells the changes by the places of the result before and after.
  private mutating func apply(_ seen: LiveWatch.Scan, _ watch: LiveWatch, _ source: ProjectionSource<ReadHandle>)
    throws -> ResultChanges
  {
    let candidates = seen.touched.union(seen.entering).sorted()
    // Out with every candidate that was in, from the last place back.
    var oldPlaces: [ObjectID: Int] = [:]
    for o in candidates {
      if let k = keyOf[o] { oldPlaces[o] = place(of: o, k, watch) }
    }
    for (o, i) in oldPlaces.sorted(by: { $0.value > $1.value }) {
      objects.remove(at: i)
      keys.remove(at: i)
      keyOf[o] = nil
    }
    // In again with every candidate that matches now, at its place.
    for o in candidates {
      guard try source.state(o) != nil, try watch.compiled?.evaluate(o, in: source, variables: watch.bindings) ?? true
      else { continue }
      let k = try watch.keys(of: o, in: source)
      let i = place(of: o, k, watch)
      objects.insert(o, at: i)
      keys.insert(k, at: i)
      keyOf[o] = k
    }
    var changes = ResultChanges()
    var newPlaces: [ObjectID: Int] = [:]
    for o in candidates {
      if let k = keyOf[o] { newPlaces[o] = place(of: o, k, watch) }
    }
    changes.removed = oldPlaces.filter { newPlaces[$0.key] == nil }.map(\.value).sorted()
    changes.inserted = newPlaces.filter { oldPlaces[$0.key] == nil }.map(\.value).sorted()
    // A candidate that stayed keeps its place when as many objects that are not candidates
    // lie before it as before, and its order among such candidates holds; else it moved.
    let oldCandidatePlaces = oldPlaces.values.sorted()
    let newCandidatePlaces = newPlaces.values.sorted()
    func rank(_ place: Int, among sortedPlaces: [Int]) -> Int {
      var lo = 0
      var hi = sortedPlaces.count
      while lo < hi {
        let mid = (lo + hi) / 2
        if sortedPlaces[mid] < place { lo = mid + 1 } else { hi = mid }
      }
      return place - lo
    }
    let stayed = newPlaces.compactMap { o, new in oldPlaces[o].map { (o: o, old: $0, new: new) } }
      .sorted { $0.new < $1.new }
    var lastKept = -1
    for c in stayed {
      if seen.touched.contains(c.o) { changes.updated.append(c.new) }
      let inPlace =
        rank(c.old, among: oldCandidatePlaces) == rank(c.new, among: newCandidatePlaces) && c.old > lastKept
      if inPlace {
        lastKept = c.old
      } else {
        changes.moved.append(ResultChanges.Move(from: c.old, to: c.new))
      }
    }
    return changes
  }
}

/// A query kept current: `EventStore.observe(_:where:variables:sortedBy:)` with an entity's
/// name.
///
/// It yields the result first, then, after commits that changed it (and only then), the
/// new result with its ``ResultChanges``. Commits from other processes wake it as they do a
/// ``CommitSequence``. Commits read in one step — those that landed while the consumer of
/// the sequence was busy — are told as one change. It holds the current result and
/// nothing of the log.
public struct LiveQuery: AsyncSequence, Sendable {
  public typealias Element = LiveResult
  public typealias Failure = any Error

  let query: ObservedQuery

  public func makeAsyncIterator() -> Iterator { Iterator(query: query) }

  public struct Iterator: AsyncIteratorProtocol {
    public typealias Element = LiveResult
    public typealias Failure = any Error

    let query: ObservedQuery
    private var state = LiveState()
    private var incremental = IncrementalResult()

    init(query: ObservedQuery) { self.query = query }

    /// The log's last sequence the current result holds.
    public var position: UInt64 { query.watch.attributes == nil ? state.position : incremental.position }
    /// How many times the result was worked out again (the first included): commits whose
    /// events show that it cannot have changed do not.
    public var evaluations: Int { query.watch.attributes == nil ? state.evaluations : incremental.evaluations }

    /// The next result, waiting for a commit that changes it.
    ///
    /// - Throws: `CancellationError` when the task is cancelled; the store's errors.
    public mutating func next() async throws -> LiveResult? {
      try await query.store.untilChanged { try step() }
    }

    /// Reads the commits landed since the last result, at once: the new result when they
    /// changed it (the first call gives the result as it is), `nil` when they did not.
    public mutating func step() throws -> LiveResult? {
      let q = query
      guard q.watch.attributes == nil else { return try incremental.step(q) }
      return try state.step(q.store, q.watch) { (try q.evaluate($0), ()) }?.result
    }
  }

}

/// A query as observed: what a live query fetches and what it watches.
struct ObservedQuery: Sendable {
  let store: EventStore
  let entity: Entity
  let predicate: String?
  let variables: [String: Value]
  let sort: [SortDescriptor]
  let watch: LiveWatch

  init(_ store: EventStore, _ e: Entity, predicate: String?, variables: [String: Value], sort: [SortDescriptor]) throws
  {
    self.store = store
    entity = e
    self.predicate = predicate
    self.variables = variables
    self.sort = sort
    watch = try LiveWatch(e, predicate: predicate, variables: variables, sort: sort, model: store.model)
  }

  /// The query's result in `snapshot`.
  func evaluate(_ snapshot: Snapshot) throws -> [ObjectID] {
    try snapshot.fetch(entity.name, where: predicate, variables: variables, sortedBy: sort).objects
  }
}

/// A typed query kept current: `EventStore.observe(_:where:variables:sortedBy:)` with a
/// record type.
///
/// As ``LiveQuery``, with each result's records read in the same snapshot.
public struct LiveRecords<R: Record>: AsyncSequence {
  public typealias Element = (records: [Stored<R>], result: LiveResult)
  public typealias Failure = any Error

  let query: ObservedQuery

  public func makeAsyncIterator() -> Iterator { Iterator(query: query) }

  public struct Iterator: AsyncIteratorProtocol {
    public typealias Element = (records: [Stored<R>], result: LiveResult)
    public typealias Failure = any Error

    let query: ObservedQuery
    private var state = LiveState()

    init(query: ObservedQuery) { self.query = query }

    /// The log's last sequence the current result holds.
    public var position: UInt64 { state.position }
    /// How many times the query ran (the first result included).
    public var evaluations: Int { state.evaluations }

    /// The next records and result, waiting for a commit that changes them.
    public mutating func next() async throws -> Element? {
      try await query.store.untilChanged { try step() }
    }

    /// Reads the commits landed since the last result, at once (``LiveQuery/Iterator/step()``).
    public mutating func step() throws -> Element? {
      let q = query
      return try state.step(q.store, q.watch) { snapshot in
        let records = try snapshot.fetch(R.self, where: q.predicate, variables: q.variables, sortedBy: q.sort)
        return (records.map(\.id.id), records)
      }.map { ($0.payload, $0.result) }
    }
  }
}

extension EventStore {
  /// A query whose result is kept current as commits land: an `AsyncSequence` that yields
  /// the result, then after each commit that changed it the new result with the
  /// difference (Docs/services.md, "Live queries").
  ///
  /// ```swift
  /// for try await result in try store.observe("AddressBook", where: "lastName BEGINSWITH 'S'",
  ///                                            sortedBy: [SortDescriptor("lastName")]) {
  ///   table.apply(result.changes)   // removed, inserted, moved, updated
  /// }
  /// ```
  ///
  /// A commit runs the query again only when its events show that the result may have
  /// changed: for a predicate and sort that read the entity's own attributes (and
  /// variables, which stay as given), an insert of the entity, a set of an attribute they
  /// read on an object of the entity, an erasure, or any change to an object in the
  /// result; for one that reads relationships or other objects, every commit. The query
  /// follows the log of this handle's model version: after an upcast switches versions, a
  /// store opened again observes the new one.
  ///
  /// - Throws: `StoreError.Code.unknownEntity`; the query's errors (``QueryError``) for a
  ///   predicate that does not compile; both before anything is yielded.
  public func observe(
    _ entity: String, where predicate: String? = nil, variables: [String: Value] = [:],
    sortedBy sort: [SortDescriptor] = []
  ) throws -> LiveQuery {
    guard let e = model.entity(named: entity) else { throw StoreError.unknownEntity(entity) }
    return LiveQuery(query: try ObservedQuery(self, e, predicate: predicate, variables: variables, sort: sort))
  }

  /// A typed query kept current: the records of `type` matching, as
  /// `observe(_:where:variables:sortedBy:)` with an entity's name keeps the objects, each result's records read
  /// in the snapshot its difference was told from.
  ///
  /// - Throws: what `observe(_:where:variables:sortedBy:)` with a name throws, and ``RecordError`` for
  ///   a record type the model does not match.
  public func observe<R: Record>(
    _ type: R.Type, where predicate: String? = nil, variables: [String: Value] = [:],
    sortedBy sort: [SortDescriptor] = []
  ) throws -> LiveRecords<R> {
    let schema = try RecordSchema.of(R.self, in: model)
    return LiveRecords(
      query: try ObservedQuery(self, schema.entity, predicate: predicate, variables: variables, sort: sort))
  }
}
