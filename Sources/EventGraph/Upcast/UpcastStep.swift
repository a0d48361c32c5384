internal import LMDB

/// One source commit's migration through one step of an upcast: what the migration module
/// reads (the source state after the commit, the associations) and where it writes (a
/// destination transaction, committed with the source commit's time and metadata).
public final class UpcastStep {
  /// The step's place in the chain (0 for the first).
  public let index: Int
  /// The source commit, as it is in the source log.
  public let commit: Commit
  /// The commit's events in this step's source version: the source commit's for the first
  /// step, the step before's output for a later one.
  public let events: [Event]
  let sourceModel: Model
  let destinationModel: Model
  /// The source state after the commit.
  public let source: SourceGraph
  /// What each earlier source commit made in this step's destination, kept across commits.
  public let associations: Associations
  private let stage: VersionBuild.Stage
  private let batch: CommitBatch
  private let identities: IdentityCounter
  /// The destination commit written, and the events it holds (the next step's input).
  private(set) var written: CommitInfo?
  private(set) var output: [Event] = []

  init(
    index: Int, commit: Commit, events: [Event], stage: VersionBuild.Stage, source: SourceGraph,
    associations: Associations, destination: CommitBatch, identities: IdentityCounter
  ) {
    self.index = index
    self.commit = commit
    self.events = events
    self.sourceModel = stage.sourceModel
    self.destinationModel = stage.destinationModel
    self.stage = stage
    self.source = source
    self.associations = associations
    self.batch = destination
    self.identities = identities
  }

  /// Applies the commit's events to the first step's scratch source state (a later step
  /// reads what the step before wrote); the state's history is not kept.
  func applySourceEvents() throws {
    guard index == 0 else { return }
    // A truncated log's base gives its lists their order keys, as a replay of it does.
    if let base = commit.metadata.base { source.projector.baseOrderKeys = base.orderKeys.makeIterator() }
    defer { source.projector.baseOrderKeys = nil }
    for e in events { try source.projector.apply(e) }
    source.projector.forgetTouched()
  }

  /// The next identity for a destination object that keeps no source's.
  public func nextIdentity() -> ObjectID {
    defer { identities.next += 1 }
    return ObjectID(identities.next)
  }

  /// The destination transaction of this commit, closed when the step ends.
  public func destination(metadata: CommitMetadata) -> Transaction {
    // The step's first transaction reuses the buffers of the batch's previous commit (that
    // commit's transactions are closed); a second one, open beside it, gets its own.
    // An insert without an identity (a Swift policy's) takes the one after the destination's
    // last, read afresh for each source commit as when every commit had a batch of its own:
    // kept for the whole batch, it would depend on where batches begin, and the upcast of a
    // log's first commits would no longer be a prefix of the whole one.
    if transactions.isEmpty { batch.nextObject = nil }
    let tx = batch.transaction(metadata: metadata, sharingBuffers: transactions.isEmpty)
    transactions.append(tx)
    return tx
  }

  /// The transactions this step made.
  private var transactions: [Transaction] = []

  /// Ends the step: its transactions can no longer be used.
  func close() {
    for tx in transactions { tx.close() }
  }

  /// Validates and writes what `tx` recorded: a commit of the destination log with the
  /// source commit's time (the last step), or the scratch projection alone (another step).
  public func finish(_ tx: Transaction) throws {
    written = try batch.commit(tx, time: commit.time, log: stage.isFinal)
    output = tx.events
  }
}

/// The source graph of an upcast, as it is after the current source commit: a scratch
/// projection of the source version, kept on disk beside the store, never the whole graph
/// in memory.
///
/// It lives for one source commit's migration, after the commit's events were applied, and
/// remembers the last object read: the mappings' expressions read one object's attributes
/// one after the other.
public final class SourceGraph: QueryObjectSource {
  let projector: Projector
  private var recent: ObjectState?

  init(projector: Projector) { self.projector = projector }

  /// The object's state after the commit; `nil` when it does not exist.
  public func state(_ object: ObjectID) throws -> ObjectState? {
    if let r = recent, r.id == object { return r }
    let s = try projector.state(object)
    if s != nil { recent = s }
    return s
  }

  /// An attribute's value after the commit; `nil` when unset or the object is gone.
  public func value(of object: ObjectID, attribute: PropertyID) throws -> Value? {
    try state(object)?[attribute]
  }

  /// The targets of a relationship after the commit, in order for an ordered one.
  public func related(to object: ObjectID, relationship: PropertyID) throws -> [ObjectID] {
    try projector.reader.related(object, relationship)
  }

  /// The entity an object had, alive or deleted (`nil` when it never existed).
  public func entity(everOf object: ObjectID) throws -> EntityID? { try projector.reader.entity(of: object) }

  /// Every link of an object: its own relationships, and the links without an inverse
  /// that point at it.
  public func links(of object: ObjectID) throws -> [ObjectID] { try projector.reader.allLinks(object).map(\.target) }
}

/// Association of (mapping, source object, key) with the destination object it made,
/// stored in LMDB, so memory stays bounded however long the log.
///
/// The way back (destination → source) is kept only when a step has Swift policies: only
/// their calls (a migration manager's `sourceInstances`, the default relationships of another
/// destination) read it, and without them it was a fifth of the
/// upcast's LMDB writes for nothing.
///
/// One lives for a batch of source commits (one LMDB transaction) and remembers the
/// destinations it has read or written for the current source commit: a commit's stages
/// read a source's destinations several times (to reconcile, to link, as another mapping's
/// targets). Remembering them for the whole batch took 3% more instructions off but held
/// 11 MiB more at the benchmark's size (with batches of 50,000 events).
public final class Associations {
  let txn: WriteHandle
  /// mapping u16 · source u64 · key bytes → destination u64.
  let forward: Database
  /// destination u64 → mapping u16 · source u64 · key bytes.
  let reverse: Database
  /// Whether `reverse` is kept (see above).
  let keepsReverse: Bool
  /// The destinations of the (mapping, source) pairs read or written for the current source
  /// commit, in key order: what LMDB holds for them.
  private var known: [Pair: [(String, ObjectID)]] = [:]

  private struct Pair: Hashable {
    let mapping: Int
    let source: ObjectID
  }

  init(txn: WriteHandle, forward: Database, reverse: Database, keepsReverse: Bool) {
    self.txn = txn
    self.forward = forward
    self.reverse = reverse
    self.keepsReverse = keepsReverse
  }

  static func prefix(_ mapping: Int, _ source: ObjectID) -> [UInt8] {
    let s = source.rawValue
    return [
      UInt8(truncatingIfNeeded: mapping >> 8), UInt8(truncatingIfNeeded: mapping),
      UInt8(truncatingIfNeeded: s >> 56), UInt8(truncatingIfNeeded: s >> 48), UInt8(truncatingIfNeeded: s >> 40),
      UInt8(truncatingIfNeeded: s >> 32), UInt8(truncatingIfNeeded: s >> 24), UInt8(truncatingIfNeeded: s >> 16),
      UInt8(truncatingIfNeeded: s >> 8), UInt8(truncatingIfNeeded: s),
    ]
  }

  private static func key(_ mapping: Int, _ source: ObjectID, _ key: String) -> [UInt8] {
    var k = prefix(mapping, source)
    k.append(contentsOf: key.utf8)
    return k
  }

  /// Forgets what it remembers (a new source commit begins).
  func forgetRemembered() { known.removeAll(keepingCapacity: true) }

  /// The destinations made from `source` by `mapping`, in key order.
  public func destinations(mapping: Int, source: ObjectID) throws -> [(String, ObjectID)] {
    let pair = Pair(mapping: mapping, source: source)
    if let d = known[pair] { return d }
    let p = Self.prefix(mapping, source)
    var result: [(String, ObjectID)] = []
    try txn.forEach(forward, from: p) { k, v in
      guard k.count >= p.count, k.starts(with: p), let d = BigEndianKey.decode(v) else { return false }
      result.append((String(decoding: k[p.count...], as: UTF8.self), ObjectID(d)))
      return true
    }
    known[pair] = result
    return result
  }

  /// The (mapping, source) a destination object was made from.
  public func source(of destination: ObjectID) throws -> (mapping: Int, source: ObjectID)? {
    guard keepsReverse else {
      throw VersionBuildError("the way back from destination to source is kept only for steps with Swift policies")
    }
    guard let v = try txn.get(reverse, key: BigEndianKey(destination.rawValue)), v.count >= 10 else { return nil }
    let mapping = Int(v[0]) << 8 | Int(v[1])
    var s: UInt64 = 0
    for b in v[2..<10] { s = s << 8 | UInt64(b) }
    return (mapping, ObjectID(s))
  }

  /// Records that `mapping` made `destination` from `source` under `key` (the name of what
  /// the mapping makes, for a source that makes several).
  public func add(mapping: Int, source: ObjectID, key: String, destination: ObjectID) throws {
    let k = Self.key(mapping, source, key)
    try txn.put(forward, key: k, value: BigEndianKey(destination.rawValue))
    if keepsReverse { try txn.put(reverse, key: BigEndianKey(destination.rawValue), value: k) }
    // Changed in place: a copy taken out of the dictionary would be copied again to change.
    guard let i = known.index(forKey: Pair(mapping: mapping, source: source)) else { return }
    known.values[i].removeAll { $0.0 == key }
    // LMDB's order: the keys' bytes (a String's `<` compares otherwise beyond ASCII).
    let at = known.values[i].firstIndex { key.utf8.lexicographicallyPrecedes($0.0.utf8) } ?? known.values[i].endIndex
    known.values[i].insert((key, destination), at: at)
  }

  /// Forgets what ``add(mapping:source:key:destination:)`` recorded: the source no longer
  /// makes that destination under `key`.
  public func remove(mapping: Int, source: ObjectID, key: String, destination: ObjectID) throws {
    try txn.delete(forward, key: Self.key(mapping, source, key))
    if keepsReverse { try txn.delete(reverse, key: BigEndianKey(destination.rawValue)) }
    if let i = known.index(forKey: Pair(mapping: mapping, source: source)) {
      known.values[i].removeAll { $0.0 == key }
    }
  }
}
