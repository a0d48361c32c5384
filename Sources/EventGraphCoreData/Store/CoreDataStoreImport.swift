import EventGraph
import Foundation

/// What `eventtool import-coredata` may be told.
public struct CoreDataStoreImportOptions: Sendable {
  /// The model version to read the store with; `nil`: the one that fits.
  public var version: Int?
  /// Objects per commit.
  public var batch: Int
  /// Skip the rows that break the model (reported) instead of refusing the store.
  public var lenient: Bool
  /// Refuse the store, before anything is written, when reading it would convert or
  /// leave out anything (a note: an unknown column, an entity read by its old name).
  public var strict: Bool

  public init(version: Int? = nil, batch: Int = 10_000, lenient: Bool = false, strict: Bool = false) {
    self.version = version
    self.batch = batch
    self.lenient = lenient
    self.strict = strict
  }
}

/// What an import did.
public struct CoreDataStoreImportResult: Sendable {
  public var version: Int
  public var versionName: String
  public var created: Bool
  /// Objects written per entity, by entity name.
  public var objects: [String: Int]
  public var commits: Int
  /// The rows left out with `lenient`, each naming its table and key.
  public var skipped: [String]
  /// What is in the store and not imported (columns the model does not know, …).
  public var notes: [String]
  /// The store had been imported into this one already: nothing was written.
  public var alreadyImported: Bool
}

/// `eventtool import-coredata`: a Core Data store (SQLite or XML) into an EventGraph store.
public enum CoreDataStoreImport {
  /// Reads `file` with the model version of `model` that fits it, checks every object, and
  /// appends them with their links to the store at `store` (created when missing).
  ///
  /// - Parameter identity: called for each object written, with its Core Data id
  ///   (`Entity/p12` for a SQLite row, the XML id for an XML store) and its identity.
  /// - Throws: ``CoreDataError`` naming the file and the table and row, element or version at
  ///   fault; nothing is created or written then.
  public static func run(
    store: String, model: String, file: String, options: CoreDataStoreImportOptions = .init(),
    identity: @escaping (String, String) -> Void = { _, _ in }
  ) throws -> CoreDataStoreImportResult {
    try run(store: store, models: [model], file: file, options: options, identity: identity)
  }

  /// ``run(store:model:file:options:identity:)`` with the model an app opens its store with
  /// merged from several bundles, as `NSManagedObjectModel.mergedModel(from:)` merges them:
  /// the current version of each, their entities together (one name in two bundles is
  /// refused, naming both), under the first bundle's name, as one version.
  public static func run(
    store: String, models: [String], file: String, options: CoreDataStoreImportOptions = .init(),
    identity: @escaping (String, String) -> Void = { _, _ in }
  ) throws -> CoreDataStoreImportResult {
    guard let model = models.first else { throw CoreDataError(file: file, "no model to read the store with") }
    let (name, versions) =
      models.count == 1 ? try CoreDataModelBundle.read(model) : try merged(models, version: options.version, file: file)
    var candidates: [(CoreDataModelVersion, Model)] = []
    for v in versions where options.version == nil || options.version == v.version {
      let out = try v.model.modelFile(name: name, version: v.version, file: v.file, options: .loadable)
      do {
        candidates.append((v, try Model(json: Array(out.text.utf8), file: v.file)))
      } catch {
        throw CoreDataError(file: v.file, "the EventGraph model made from it does not load: \(error)")
      }
    }
    if let n = options.version, candidates.isEmpty {
      throw CoreDataError(file: model, "has no version \(n) (versions 1 to \(versions.count))")
    }
    let head = (try? FileHandle(forReadingFrom: URL(fileURLWithPath: file)).read(upToCount: 16)) ?? nil
    let isXML = head.map { [UInt8]($0).first { $0 > 32 } == UInt8(ascii: "<") } ?? false
    let plan: StorePlan =
      isXML
      ? try XMLStorePlan.make(file: file, candidates: candidates, lenient: options.lenient)
      : try SQLitePlan.make(file: file, candidates: candidates, lenient: options.lenient)
    if options.strict, let first = plan.notes.first {
      throw CoreDataError.strict(file: file, notes: plan.notes, first: first)
    }
    return try write(plan, to: store, options: options, identity: identity)
  }

  /// The current versions of several bundles merged into one model version.
  static func merged(_ paths: [String], version: Int?, file: String) throws -> (String, [CoreDataModelVersion]) {
    guard version == nil else {
      throw CoreDataError(
        file: file, "a version number names a version of one model; a merged model is each bundle's current version")
    }
    var merged = CoreDataModel()
    var owner: [String: String] = [:]
    var names: [String] = []
    var firstName = ""
    var firstFile = ""
    for path in paths {
      let (name, versions) = try CoreDataModelBundle.read(path)
      guard let current = versions.first(where: \.isCurrent) ?? versions.last else {
        throw CoreDataError(file: path, "the model has no version")
      }
      if firstName.isEmpty {
        firstName = name
        firstFile = current.file
      }
      names.append(current.name)
      for e in current.model.entities {
        if let other = owner[e.name] {
          throw CoreDataError(
            file: path, "entity \(e.name) is in both \(other) and \(path): the models cannot be merged")
        }
        owner[e.name] = path
        merged.entities.append(e)
      }
      merged.fetchRequests += current.model.fetchRequests
      merged.configurations += current.model.configurations
      merged.userInfo.merge(current.model.userInfo) { a, _ in a }
      merged.readNotes += current.model.readNotes
    }
    let version = CoreDataModelVersion(
      name: "merged (" + names.joined(separator: ", ") + ")", version: 1, isCurrent: true, file: firstFile,
      format: "merged", model: merged)
    return (firstName, [version])
  }

  private static func write(
    _ plan: StorePlan, to path: String, options: CoreDataStoreImportOptions,
    identity: @escaping (String, String) -> Void
  ) throws -> CoreDataStoreImportResult {
    let existing = (try? FileManager.default.contentsOfDirectory(atPath: path)).map { !$0.isEmpty } ?? false
    let store: EventStore
    if existing {
      store = try EventStore(path: path)
      guard store.model.name == plan.model.name, store.model.version == plan.model.version,
        store.model.descriptions == plan.model.descriptions
      else {
        throw CoreDataError(
          file: path,
          "the store's model is \(store.model.name) v\(store.model.version), not the \(plan.model.name) v\(plan.model.version) made from the Core Data model: import into a new store"
        )
      }
    } else {
      store = try EventStore.create(at: path, model: plan.model)
    }
    var result = CoreDataStoreImportResult(
      version: plan.version.version, versionName: plan.version.name, created: !existing, objects: [:], commits: 0,
      skipped: plan.skipped, notes: plan.notes, alreadyImported: false)
    let mark = plan.uuid.map { Checkpoint(name: "coredata." + $0, value: Array("imported".utf8)) }
    if let mark, try store.checkpoint(named: mark.name) != nil {
      result.alreadyImported = true
      return result
    }
    let sink = ObjectSink(store: store, batchSize: options.batch) { key, entity, id in
      identity(plan.coreDataID(key, entity), "\(entity)/\(id.rawValue)")
    }
    try plan.write(into: sink)
    try sink.flush(checkpoint: mark)
    result.objects = sink.counts
    result.commits = sink.commits
    return result
  }
}

/// A store read and checked, ready to write: the version it fits and how to write it.
protocol StorePlan {
  var version: CoreDataModelVersion { get }
  var model: Model { get }
  var uuid: String? { get }
  var skipped: [String] { get }
  var notes: [String] { get }
  func coreDataID(_ key: ObjectKey, _ entity: String) -> String
  func write(into sink: ObjectSink) throws
}

/// A SQLite store with the version that fits it and its rows checked.
struct SQLitePlan: StorePlan {
  let version: CoreDataModelVersion
  let model: Model
  let uuid: String?
  let skipped: [String]
  let notes: [String]
  let run: SQLiteImport

  static func make(file: String, candidates: [(CoreDataModelVersion, Model)], lenient: Bool) throws -> SQLitePlan {
    let source = try SQLiteStore(path: file)
    var fits: [(CoreDataModelVersion, Model, SQLiteLayout)] = []
    var reasons: [String] = []
    for (v, m) in candidates {
      let stored = Set(m.descriptions.flatMap { e in e.attributes.map { "\(e.name).\($0.name)" } })
      switch source.layout(v, stored: stored) {
      case .success(let l): fits.append((v, m, l))
      case .failure(let f):
        reasons.append("version \(v.version) (\(v.name)): " + f.reasons.prefix(3).joined(separator: "; "))
      }
    }
    // The version whose columns leave the fewest unknown; the latest among equals.
    guard
      let best = fits.min(by: { a, b in
        let (x, y) = (
          a.2.tables.map(\.unknownColumns.count).reduce(0, +), b.2.tables.map(\.unknownColumns.count).reduce(0, +)
        )
        return x != y ? x < y : a.0.version > b.0.version
      })
    else {
      throw CoreDataError(file: file, "the store matches no version of the model: " + reasons.joined(separator: " | "))
    }
    var run = try SQLiteImport(source: source, layout: best.2, model: best.1)
    let bad = try run.check(lenient: lenient)
    if !bad.isEmpty && !lenient {
      throw CoreDataError(
        file: file,
        "\(bad.count) row(s) break model version \(best.0.version): "
          + bad.prefix(10).joined(separator: "; ") + (bad.count > 10 ? "; …" : ""), remedy: .lenient)
    }
    return SQLitePlan(version: best.0, model: best.1, uuid: source.uuid, skipped: bad, notes: best.2.notes, run: run)
  }

  func coreDataID(_ key: ObjectKey, _ entity: String) -> String { "\(entity)/p\(key.row)" }

  func write(into sink: ObjectSink) throws { try run.write(into: sink) }
}
