internal import LMDB

/// Reads objects now or as of a past sequence, one object at a time: the only way a clone
/// or a snapshot looks at the source, so collecting a subgraph costs in proportion to the
/// subgraph and its history, never to the log.
///
/// The past is rebuilt from each object's own history, as ``Snapshot/object(_:asOf:)``
/// does, with one difference that matters for large subgraphs: a commit is decoded once
/// and indexed by object, then shared by every object it touched (a clone of 100,000
/// objects made in one commit would otherwise decode that commit 100,000 times).
struct VersionReader<T: TransactionReading> {
  let reader: GraphReader<T>
  /// `nil`: the current state.
  let asOf: UInt64?
  private var commits = CommitIndexCache()
  private var entities: [ObjectID: EntityID] = [:]
  /// Told the number of objects read so far while a subgraph is collected.
  var progress: (Int) -> Void = { _ in }

  init(reader: GraphReader<T>, asOf: UInt64?) {
    self.reader = reader
    self.asOf = asOf
  }

  var model: Model { reader.model }

  /// The object's values and relationships; `nil` when it does not exist (then).
  mutating func version(_ id: ObjectID) throws -> ObjectVersion? {
    guard let asOf else { return try current(id) }
    return try past(id, asOf: asOf)
  }

  /// The object as a subgraph member, now or then.
  mutating func member(_ id: ObjectID) throws -> Member? {
    guard let asOf else { return try currentMember(id) }
    return try past(id, asOf: asOf).map { Member($0, model: model) }
  }

  /// The current state, read from the projection: one record and one cursor over its links.
  func current(_ id: ObjectID) throws -> ObjectVersion? {
    try currentMember(id)?.version
  }

  /// The current state as a member: one record and one cursor over its links.
  func currentMember(_ id: ObjectID) throws -> Member? {
    guard let state = try reader.object(id) else { return nil }
    let count = state.values.count
    var lists = [[ObjectID]](repeating: [], count: count)
    // Entries come sorted by relationship, then position or target; reverse entries of
    // relationships without an inverse (reverse slots, after all others) belong to the
    // other object.
    try reader.scanLinks(object: id) { slot, target in
      if !slot.isReverse, Int(slot.stored) < count { lists[Int(slot.stored)].append(target) }
    }
    return Member(state: state, lists: lists)
  }

  /// The object as it was after event `sequence`, rebuilt from its own history.
  mutating func past(_ id: ObjectID, asOf sequence: UInt64) throws -> ObjectVersion? {
    var version: ObjectVersion? = nil
    for first in try reader.history(id) where first <= sequence {
      let commit = try commits.commit(first, reader: reader)
      if commit.isBase {
        version = commit.baseVersion(of: id)
        continue
      }
      for (seq, event) in commit.events(naming: id) {
        guard seq <= sequence else { break }
        try ObjectVersion.fold(&version, event, id: id, model: model) { rel, o in try inverse(of: rel, from: o) }
      }
    }
    return ObjectVersion.finished(version, model: model)
  }

  /// The entity an identity was created with (cached: the same objects come up often).
  mutating func entity(of id: ObjectID) throws -> EntityID? {
    if let e = entities[id] { return e }
    let e = try reader.entity(of: id)
    if let e { entities[id] = e }
    return e
  }

  private mutating func inverse(of rel: PropertyID, from o: ObjectID) throws -> PropertyID? {
    guard let e = try entity(of: o), case .relationship(let r)? = model.entity(e)?.property(rel)?.kind
    else { return nil }
    return r.inverse
  }

  /// The commit whose first sequence is `first`, decoded and indexed (cached).
  mutating func commit(_ first: UInt64) throws -> IndexedCommit {
    try commits.commit(first, reader: reader)
  }
}

/// A decoded commit with, for each object, the events that name it (as subject or target).
final class IndexedCommit {
  let commit: Commit
  private let byObject: [ObjectID: [Int32]]
  /// For a base (Docs/retention.md): the model, and each object's ordered lists with their
  /// order keys, since a base links in identity order, not in each list's order.
  private let base: BaseLists?

  /// A base's entities (of the objects it inserts) and ordered lists, each member with its
  /// order key.
  private struct BaseLists {
    let model: Model
    var entities: [ObjectID: EntityID] = [:]
    var lists: [ObjectID: [PropertyID: [(key: UInt64, target: ObjectID)]]] = [:]
  }

  init(_ commit: Commit, model: Model) throws {
    self.commit = commit
    base = try commit.metadata.base.map { try Self.orderedLists(commit, $0, model: model) }
    var index: [ObjectID: [Int32]] = [:]
    for (i, e) in commit.events.enumerated() {
      let n = Int32(truncatingIfNeeded: i)
      switch e {
      case .link(let o, _, let t, _), .unlink(let o, _, let t):
        index[o, default: []].append(n)
        if t != o { index[t, default: []].append(n) }
      default:
        index[e.object, default: []].append(n)
      }
    }
    self.byObject = index
  }

  /// The events that name `id`, in order, with their sequences.
  func events(naming id: ObjectID) -> [(sequence: UInt64, event: Event)] {
    (byObject[id] ?? []).map { (commit.firstSequence + UInt64($0), commit.events[Int($0)]) }
  }

  /// Whether the commit is the base of a truncated log.
  var isBase: Bool { base != nil }

  /// For a base: the object as the base holds it (`nil` when it does not), its ordered lists
  /// in their order.
  func baseVersion(of id: ObjectID) -> ObjectVersion? {
    guard let base else { return nil }
    var version: ObjectVersion? = nil
    for (_, e) in events(naming: id) {
      ObjectVersion.fold(&version, e, id: id, model: base.model) { rel, o in
        guard let e = base.entities[o], case .relationship(let r)? = base.model.entity(e)?.property(rel)?.kind else {
          return nil
        }
        return r.inverse
      }
    }
    for (rel, members) in base.lists[id] ?? [:] {
      version?.relationships[rel] = members.sorted { $0.key < $1.key }.map(\.target)
    }
    return ObjectVersion.finished(version, model: base.model)
  }

  /// A base's entities and ordered lists: its keys are taken by its links in order, the
  /// source's list first, then the target's where the inverse is ordered too
  /// (``HistoryBase/orderKeys``).
  private static func orderedLists(_ commit: Commit, _ base: HistoryBase, model: Model) throws -> BaseLists {
    var found = BaseLists(model: model)
    for e in commit.events { if case .insert(let o, let entity) = e { found.entities[o] = entity } }
    func relationship(_ o: ObjectID, _ id: PropertyID) throws -> Relationship {
      guard let e = found.entities[o], case .relationship(let r)? = model.entity(e)?.property(id)?.kind else {
        throw StoreError.corrupt("the base links #\(o.rawValue) by relationship \(id.rawValue), which it does not have")
      }
      return r
    }
    var keys = base.orderKeys.makeIterator()
    func next() throws -> UInt64 {
      guard let k = keys.next() else { throw StoreError.corrupt("the base has fewer order keys than ordered links") }
      return k
    }
    for e in commit.events {
      guard case .link(let o, let rel, let t, _) = e else { continue }
      let r = try relationship(o, rel)
      if r.isOrdered { found.lists[o, default: [:]][rel, default: []].append((try next(), t)) }
      if let inv = r.inverse, try relationship(t, inv).isOrdered {
        found.lists[t, default: [:]][inv, default: []].append((try next(), o))
      }
    }
    return found
  }
}

/// Decoded commits by first sequence, dropped wholesale past a budget of events so that
/// memory stays bounded however long the history.
struct CommitIndexCache {
  static let eventBudget = 4_000_000
  private var cached: [UInt64: IndexedCommit] = [:]
  private var events = 0
  /// The base of a truncated log, kept apart: every object of it comes back to it.
  private var baseAt: (UInt64, IndexedCommit)?

  mutating func commit<T: TransactionReading>(_ first: UInt64, reader: GraphReader<T>) throws -> IndexedCommit {
    if let c = cached[first] { return c }
    // A base stands for every sequence up to its own last: the versions objects had there.
    if let (key, base) = baseAt, first >= key, first <= base.commit.lastSequence { return base }
    guard let commit = try reader.commit(containing: first),
      commit.firstSequence == first || commit.metadata.base != nil
    else {
      throw StoreError.corrupt("a history entry names sequence \(first), which does not start a commit in the log")
    }
    let indexed = try IndexedCommit(commit, model: reader.model)
    if commit.metadata.base != nil {
      baseAt = (commit.firstSequence, indexed)
      return indexed
    }
    if events + commit.events.count > Self.eventBudget {
      cached.removeAll()
      events = 0
    }
    cached[first] = indexed
    events += commit.events.count
    return indexed
  }
}

extension GraphReader {
  /// Calls `body` with each link entry of an object: slot and target, in key order,
  /// without building an array.
  func scanLinks(object o: ObjectID, _ body: (LinkSlot, ObjectID) throws -> Void) throws {
    let prefix = StoreKey.object(o)
    try txn.forEach(dbs.links, from: prefix) { key, value in
      guard KeyField.hasPrefix(key, prefix), let slot = LinkEntry.slot(key) else { return false }
      if let t = LinkEntry.target(key: key, value: value) { try body(slot, t) }
      return true
    }
  }
}
