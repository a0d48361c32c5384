import EventGraphLocking
import EventGraphText
import Foundation
import LMDB
import Testing

@testable import EventGraph
@testable import EventGraphMigration

// MARK: - Seeded randomness

/// Commit times of generated histories: fixed, so two runs of one seed write the same bytes.
func historyTime(_ i: Int) -> Date { Date(timeIntervalSince1970: 1_800_000_000 + Double(i) * 61.25) }

// MARK: - Models and mappings written inline

func model(_ text: String) throws -> Model { try Model(json: Array(text.utf8), file: "inline model") }
func mapping(_ text: String) throws -> MappingModel {
  try MappingModel(json: Array(text.utf8), file: "inline.mapping.json")
}

// MARK: - Exports and a canonical form independent of identities

/// The store's export (as of a sequence when given), one JSON line per object.
func exportLines(_ store: EventStore, asOf: UInt64? = nil) throws -> [String] {
  var lines: [String] = []
  try store.export(asOf: asOf) { lines.append($0) }
  return lines
}

func exportLines(at path: String, asOf: UInt64? = nil) throws -> [String] {
  try exportLines(try EventStore(path: path), asOf: asOf)
}

/// One object of an export.
struct ExportedObject {
  var id: String
  var entity: String
  /// `name=value` in the export's order (the entity's property order).
  var attributes: [String]
  /// Relationship name → target identities.
  var relationships: [(String, [String])]

  init(line: String) throws {
    let json = try JSON(parsing: line)
    id = json["id"]?.stringValue ?? "?"
    entity = json["entity"]?.stringValue ?? "?"
    attributes = (json["attributes"]?.objectFields ?? []).map { "\($0.key)=\($0.value.serialized())" }
    relationships = (json["relationships"]?.objectFields ?? []).map { f in
      if let a = f.value.arrayValue { return (f.key, a.compactMap(\.stringValue)) }
      return (f.key, f.value.stringValue.map { [$0] } ?? [])
    }
  }
}

/// Describes a graph without its identities: each object as its entity and attributes,
/// refined by a few rounds of Weisfeiler–Lehman over its neighbours, then printed with its
/// relationships as the neighbours' descriptions.
///
/// Two exports of isomorphic graphs give
/// the same sorted lines; a difference in any attribute or link changes some line.
///
/// - Parameter ordered: "Entity.relationship" of ordered relationships, whose order counts.
func canonicalForm(_ lines: [String], ordered: Set<String> = [], rounds: Int = 3) throws -> [String] {
  let objects = try lines.map(ExportedObject.init(line:))
  var index: [String: Int] = [:]
  for (i, o) in objects.enumerated() { index[o.id] = i }
  let base = objects.map { "\($0.entity){\($0.attributes.joined(separator: ", "))}" }
  var labels = base.map(fnv)
  for _ in 0..<rounds {
    labels = objects.indices.map { i in
      var text = labels[i]
      for (name, targets) in objects[i].relationships.sorted(by: { $0.0 < $1.0 }) {
        let described = targets.map { t in index[t].map { labels[$0] } ?? "dangling" }
        let keepOrder = ordered.contains("\(objects[i].entity).\(name)")
        text += "|\(name):" + (keepOrder ? described : described.sorted()).joined(separator: ",")
      }
      return fnv(text)
    }
  }
  return objects.indices.map { i in
    var line = base[i]
    for (name, targets) in objects[i].relationships.sorted(by: { $0.0 < $1.0 }) {
      let described = targets.map { t in index[t].map { "\(base[$0])#\(labels[$0].prefix(6))" } ?? "dangling \(t)" }
      let keepOrder = ordered.contains("\(objects[i].entity).\(name)")
      line += " \(name)=[\((keepOrder ? described : described.sorted()).joined(separator: "; "))]"
    }
    return line + " #\(labels[i].prefix(6))"
  }.sorted()
}

/// FNV-1a, 64 bits, as hex: a stable hash for labels.
func fnv(_ text: String) -> String {
  var h: UInt64 = 0xcbf2_9ce4_8422_2325
  for b in text.utf8 {
    h ^= UInt64(b)
    h = h &* 0x0000_0100_0000_01b3
  }
  return String(h, radix: 16)
}

/// The identities of an entity's objects in an export, as in ["AddressBook/1", …] → [1, …].
func identities(_ lines: [String], entity: String) throws -> Set<String> {
  Set(
    try lines.map(ExportedObject.init(line:)).filter { $0.entity == entity }.map {
      $0.id.split(separator: "/").last.map(String.init) ?? "?"
    })
}

/// The lines of `a` missing from `b` and of `b` missing from `a`, for readable failures.
func difference(_ a: [String], _ b: [String]) -> String {
  let missing = a.filter { !b.contains($0) }
  let extra = b.filter { !a.contains($0) }
  return "only in the first:\n  " + missing.joined(separator: "\n  ") + "\nonly in the second:\n  "
    + extra.joined(separator: "\n  ")
}

// MARK: - Raw bytes of the databases

/// Every key and value of the named databases (missing ones are reported as such).
func dumpDatabases(at path: String, _ names: [String]) throws -> [String: [[UInt8]]] {
  let store = try EventStore(path: path)
  return try dumpDatabases(store, names)
}

func dumpDatabases(_ store: EventStore, _ names: [String]) throws -> [String: [[UInt8]]] {
  var result: [String: [[UInt8]]] = [:]
  for name in names {
    guard let db = try store.env.openDatabase(name, create: false) else {
      result[name] = [Array("missing".utf8)]
      continue
    }
    var entries: [[UInt8]] = []
    try store.env.read { txn in
      try txn.forEach(db) { k, v in
        entries.append([UInt8](k))
        entries.append([UInt8](v))
        return true
      }
    }
    result[name] = entries
  }
  return result
}

/// Every database of the environment, found through the main database.
func dumpEverything(at path: String) throws -> [String: [[UInt8]]] {
  let store = try EventStore(path: path)
  guard let main = try store.env.openDatabase(nil, create: false) else { return [:] }
  var names: [String] = []
  try store.env.read { txn in
    try txn.forEach(main) { k, _ in
      names.append(String(decoding: k, as: UTF8.self))
      return true
    }
  }
  return try dumpDatabases(store, names)
}

/// A dump without the `meta` entry that differs between any two stores: their identity.
func withoutStoreID(_ dump: [String: [[UInt8]]]) -> [String: [[UInt8]]] {
  var d = dump
  if let meta = d["meta"] {
    var kept: [[UInt8]] = []
    for i in stride(from: 0, to: meta.count - 1, by: 2) where meta[i] != Array("storeID".utf8) {
      kept += [meta[i], meta[i + 1]]
    }
    d["meta"] = kept
  }
  return d
}

/// The databases of one model version: its log and every projection.
func versionDatabases(_ version: Int) -> [String] {
  ["log", "objects", "identities", "links", "entities", "history", "dedupe", "index", "members"].map {
    "\($0).v\(version)"
  }
}

// MARK: - Recording from Sendable closures

final class Recorder: Sendable {
  private let entries = Locked<[String]>([])
  func record(_ s: String) { entries.withLock { $0.append(s) } }
  var all: [String] { entries.withLock { $0 } }
  func reset() { entries.withLock { $0.removeAll() } }
}

// MARK: - The commutation law

/// A v1 store at `path` after `history`, with every commit's export.
struct RecordedHistory {
  /// (first sequence, last sequence, export of the v1 state after the commit).
  var commits: [(first: UInt64, last: UInt64, lines: [String])] = []
  /// Each commit's time and metadata, by first sequence.
  var stamps: [UInt64: (time: Date, metadata: CommitMetadata)] = [:]
}

func recordHistory(at path: String, model: Model, _ history: (EventStore) throws -> Void) throws -> RecordedHistory {
  let store = try EventStore.create(at: path, model: model)
  try history(store)
  var recorded = RecordedHistory()
  for c in try store.read({ try $0.commits() }) {
    recorded.commits.append((c.firstSequence, c.lastSequence, try exportLines(store, asOf: c.lastSequence)))
    recorded.stamps[c.firstSequence] = (c.time, c.metadata)
  }
  return recorded
}

/// Checks the commutation law of ARCHITECTURE.md on one history: for every v1 commit c,
/// the upcast store's state as of the image of c (its last commit made from a source
/// commit at or before c) equals a whole-store upcast of the v1 state at c, compared
/// without identities.
///
/// Objects of `kept` (source entity → destination entity) must keep
/// their identities.
func checkCommutation(
  v1: Model, v2: Model, mapping: MappingModel?, policies: PolicyRegistry = .init(), kept: [(String, String)],
  label: String = #function, sourceLocation: SourceLocation = #_sourceLocation, _ history: (EventStore) throws -> Void
) throws {
  try checkCommutation(
    v1: v1, through: [v2], mappings: mapping.map { [$0] } ?? [], policies: policies, kept: kept, label: label,
    sourceLocation: sourceLocation, history)
}

/// The commutation law for a chain of versions upcast in one pass (`through`, the last one
/// the destination): the same check against a whole-store chain upcast.
func checkCommutation(
  v1: Model, through models: [Model], mappings: [MappingModel], policies: PolicyRegistry = .init(),
  kept: [(String, String)], label: String = #function, sourceLocation: SourceLocation = #_sourceLocation,
  _ history: (EventStore) throws -> Void
) throws {
  let v2 = try #require(models.last, sourceLocation: sourceLocation)
  let dir = temporaryDirectory(label)
  defer { removeDirectory(dir) }
  let path = dir + "/store"
  let recorded = try recordHistory(at: path, model: v1, history)
  #expect(recorded.commits.count > 3, "the history is too short to test anything", sourceLocation: sourceLocation)
  _ = try EventStore.upcast(at: path, through: models, mappings: mappings, policies: policies)
  let upcast = try EventStore(path: path)
  #expect(upcast.model.version == v2.version, sourceLocation: sourceLocation)
  let v2Commits = try upcast.read { try $0.commits() }
  // Each v2 commit names the v1 commit it came from; they come in order.
  let sources = v2Commits.map { $0.metadata.sourceCommit ?? 0 }
  #expect(sources == sources.sorted() && Set(sources).count == sources.count, sourceLocation: sourceLocation)
  #expect(Set(sources).isSubset(of: Set(recorded.commits.map(\.first))), sourceLocation: sourceLocation)
  // … and keep its time and metadata.
  for c in v2Commits {
    guard let source = c.metadata.sourceCommit, let stamp = recorded.stamps[source] else { continue }
    var metadata = c.metadata
    metadata.sourceCommit = nil
    #expect(c.time == stamp.time && metadata == stamp.metadata, "v2 commit \(c.number)", sourceLocation: sourceLocation)
  }
  let ordered = Set(v2.entities.flatMap { e in e.relationships.filter(\.isOrdered).map { "\(e.name).\($0.name)" } })

  for (n, c) in recorded.commits.enumerated() {
    let image = v2Commits.last { ($0.metadata.sourceCommit ?? 0) <= c.first }
    let streamed = try image.map { try exportLines(upcast, asOf: $0.lastSequence) } ?? []
    // The same v1 state, imported into a fresh store and upcast as a whole.
    let fresh = dir + "/whole-\(n)"
    do {
      let store = try EventStore.create(at: fresh, model: v1)
      if !c.lines.isEmpty { _ = try store.importObjects(Array(c.lines.joined(separator: "\n").utf8)) }
    }
    _ = try EventStore.upcast(at: fresh, through: models, mappings: mappings, policies: policies)
    let whole = try exportLines(at: fresh)
    removeDirectory(fresh)
    let a = try canonicalForm(streamed, ordered: ordered)
    let b = try canonicalForm(whole, ordered: ordered)
    #expect(
      a == b, "v1 commit \(n + 1) (sequence \(c.first)): streamed upcast ≠ whole-store upcast\n\(difference(a, b))",
      sourceLocation: sourceLocation)
    var identitiesKept = true
    for (from, to) in kept {
      let before = try identities(c.lines, entity: from)
      let after = try identities(streamed, entity: to)
      #expect(
        before == after, "v1 commit \(n + 1): \(from) identities not kept as \(to)", sourceLocation: sourceLocation)
      identitiesKept = identitiesKept && before == after
    }
    if a != b || !identitiesKept { break }  // one counterexample is enough to read
  }
  #expect(try upcast.verify().isOK, sourceLocation: sourceLocation)
}
