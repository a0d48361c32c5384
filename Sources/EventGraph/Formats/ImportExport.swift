internal import EventGraphText
internal import LMDB

/// What an import did.
public struct ImportResult: Sendable {
  /// The objects this run imported (not those an interrupted run had imported before it).
  public var objects = 0
  public var commits: [CommitInfo] = []
  /// The file's identities, mapped to the store's (filled by ``EventStore/importObjects(_:batch:metadata:)``
  /// only: a streamed import keeps no map it does not need).
  public var identities: [String: ObjectID] = [:]
  /// When the run resumed an interrupted import of the same input: the objects that import
  /// had committed, and the last line they came from.
  public var resumed: (objects: Int, line: Int)?
  /// Whether the whole input had been imported already: nothing was written.
  public var alreadyImported = false
}

/// How ``EventStore/importObjects(from:options:progress:)`` imports.
public struct ImportOptions: Sendable {
  /// Objects per commit (a batch grows past it while one of its objects waits for a later
  /// line to satisfy a required relationship); `nil`: the whole input in one commit.
  public var batch: Int?
  /// Import an export (ids that are store identities) into a store that is not empty, its
  /// objects getting new identities; refused otherwise.
  public var newIdentities: Bool
  /// The metadata of each commit.
  public var metadata: CommitMetadata

  public init(batch: Int? = nil, newIdentities: Bool = false, metadata: CommitMetadata = .init()) {
    self.batch = batch
    self.newIdentities = newIdentities
    self.metadata = metadata
  }
}

extension EventStore {
  // MARK: - Export

  /// Writes every live object (of `entity` and its sub-entities, when given) as one JSON
  /// line each, sorted by identity; with `asOf`, the objects as they were after that
  /// sequence.
  ///
  /// Importing the output and exporting again gives the same text.
  public func export(entity: String? = nil, asOf: UInt64? = nil, _ emit: (String) throws -> Void) throws {
    let only: Set<EntityID>? = try entity.map { name in
      guard let e = model.entity(named: name) else { throw StoreError.unknownEntity(name) }
      return Set(model.descendants(of: e.id))
    }
    try read { s in
      if let asOf {
        let end = try s.logEnd().sequence
        guard asOf <= end else { throw StoreError.sequenceBeyondLog(asOf, last: end) }
        try s.forEachIdentity { id, e in
          guard only?.contains(e) ?? true, let v = try s.object(id, asOf: asOf) else { return }
          try emit(s.exportRecord(v).json.serialized())
        }
        return
      }
      try s.forEachIdentity { id, e in
        guard only?.contains(e) ?? true, try s.object(id) != nil else { return }
        try emit(try s.record(id).json.serialized())
      }
    }
  }

  // MARK: - Import

  /// Imports objects from JSON Lines in memory (FORMATS.md): one commit for the whole
  /// input, or one per `batch` objects; ``ImportResult/identities`` maps the file's ids.
  ///
  /// - Throws: ``FormatError`` naming the line and field, or ``StoreError``.
  public func importObjects(_ bytes: [UInt8], batch: Int? = nil, metadata: CommitMetadata = .init()) throws
    -> ImportResult
  {
    let run = ObjectImport(
      store: self, input: JSONLinesInput(bytes: bytes), options: ImportOptions(batch: batch, metadata: metadata),
      progress: { _ in })
    var result = try run.run()
    for (label, object) in run.state.objects { result.identities[label] = object.id }
    return result
  }

  /// Imports objects from JSON Lines read a chunk at a time (FORMATS.md, "Objects as JSON
  /// Lines"), committing each batch with its objects' relationships and a checkpoint of the
  /// import's progress, in one transaction.
  ///
  /// A reference to a later line is linked in the commit that brings that line. A rerun
  /// with an input that starts with what an interrupted run committed resumes after it;
  /// with the whole of it, it writes nothing (``ImportResult/alreadyImported``).
  ///
  /// ```swift
  /// let result = try store.importObjects(
  ///   from: try JSONLinesInput(path: "people.jsonl"), options: ImportOptions(batch: 1_000)
  /// ) { bytes in print(bytes) }
  /// ```
  ///
  /// - Parameters:
  ///   - input: the JSON Lines to read.
  ///   - options: the batch size and how the import is recorded (``ImportOptions``).
  ///   - progress: called now and then with the bytes of input read.
  /// - Throws: ``FormatError`` naming the line and field (a bad line, a reference to no id
  ///   of the input, conflicting claims on a to-one, an export into a store that is not
  ///   empty), or ``StoreError``; the batch at fault writes nothing, earlier ones stay.
  public func importObjects(
    from input: JSONLinesInput, options: ImportOptions = .init(), progress: @escaping (Int) -> Void = { _ in }
  ) throws -> ImportResult {
    try ObjectImport(store: self, input: input, options: options, progress: progress).run()
  }
}

extension Snapshot {
  /// Visits every identity ever given (live or deleted) with its entity, in order.
  func forEachIdentity(_ body: (ObjectID, EntityID) throws -> Void) throws {
    try reader.txn.forEach(reader.dbs.identities) { k, v in
      if let o = KeyField.u64(k, at: 0), let e = KeyField.u16(v, at: 0) { try body(ObjectID(o), EntityID(rawValue: e)) }
      return true
    }
  }

  /// The export record of an object as it was at a past sequence.
  public func exportRecord(_ v: ObjectVersion) throws -> ObjectRecord {
    guard let e = model.entity(v.state.entity) else {
      throw StoreError.corrupt("unknown entity id \(v.state.entity.rawValue)")
    }
    var rels: [(String, [String], Bool)] = []
    for r in e.relationships {
      if let targets = v.relationships[r.id], !targets.isEmpty {
        rels.append((r.name, targets.map { display($0) }, r.isToMany))
      }
    }
    return ObjectRecord(
      id: "\(e.name)/\(v.state.id.rawValue)", entity: e.name,
      attributes: e.attributes.compactMap { a in v.state[a.id].map { (a.name, $0) } }, relationships: rels)
  }
}
