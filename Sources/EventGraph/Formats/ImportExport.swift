internal import EventGraphText
import LMDB

/// What an import did.
public struct ImportResult: Sendable {
  public var objects = 0
  public var commits: [CommitInfo] = []
  /// The file's identities, mapped to the store's.
  public var identities: [String: ObjectID] = [:]
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

  /// Imports objects from JSON Lines (FORMATS.md): one commit for the whole file, or one
  /// per `batch` objects.
  ///
  /// Every line is checked before anything is written, so a bad file
  /// writes nothing; with `batch`, each batch must be valid on its own.
  ///
  /// - Throws: ``FormatError`` naming the line and field, or ``StoreError``.
  public func importObjects(_ bytes: [UInt8], batch: Int? = nil, metadata: CommitMetadata = .init()) throws
    -> ImportResult
  {
    let records = try ImportPlan(model: model, lines: try JSONLines.parse(bytes))
    var result = ImportResult()
    var identities: [String: ObjectID] = [:]
    // Inserts and attributes first, then links, so references may point forward.
    func insert(_ items: ArraySlice<ImportPlan.Item>, _ tx: Transaction) throws {
      for item in items {
        let id = try tx.insert(item.entity.name)
        for (a, v) in item.attributes { try tx.set(id, a.name, v) }
        identities[item.label] = id
      }
    }
    func link(_ items: ArraySlice<ImportPlan.Item>, _ tx: Transaction) throws {
      for item in items {
        guard let id = identities[item.label] else { continue }
        for (r, targets) in item.relationships {
          let ids = targets.compactMap { identities[$0] }
          if r.isToMany {
            for (i, t) in ids.enumerated() { try tx.link(id, r.name, t, at: r.isOrdered ? i : nil) }
          } else {
            try tx.setRelationship(id, r.name, to: ids.first)
          }
        }
      }
    }
    let all = records.items[...]
    if let batch, batch > 0 {
      for step in [insert, link] {
        var start = 0
        while start < all.count {
          let slice = all[start..<min(start + batch, all.count)]
          if let c = try write(metadata: metadata, { tx in try step(slice, tx) }).commit { result.commits.append(c) }
          start += batch
        }
      }
    } else {
      let commit = try write(metadata: metadata) { tx in
        identities = [:]  // the closure may run again if the map must grow
        try insert(all, tx)
        try link(all, tx)
      }.commit
      if let commit { result.commits.append(commit) }
    }
    result.identities = identities
    result.objects = records.items.count
    return result
  }
}

/// The checked content of an import file.
struct ImportPlan {
  struct Item {
    var line: Int
    var label: String
    var entity: Entity
    var attributes: [(Attribute, Value?)]
    var relationships: [(Relationship, [String])]
  }
  var items: [Item] = []

  init(model: Model, lines: [(line: Int, json: JSON)]) throws(FormatError) {
    var lineOf: [String: (Int, EntityID)] = [:]
    for (line, json) in lines {
      do {
        let r = try JSONObjectReader(json, context: "")
        try r.rejectUnknownKeys(allowed: ["id", "entity", "attributes", "relationships"])
        let label = try r.string("id")
        let name = try r.string("entity")
        guard let e = model.entity(named: name) else {
          throw FormatError(line: line, field: "entity", message: "unknown entity '\(name)'")
        }
        if e.isAbstract { throw FormatError(line: line, field: "entity", message: "entity '\(name)' is abstract") }
        if let first = lineOf[label] {
          throw FormatError(line: line, field: "id", message: "'\(label)' is already used on line \(first.0)")
        }
        lineOf[label] = (line, e.id)
        var item = Item(line: line, label: label, entity: e, attributes: [], relationships: [])
        if let attrs = try r.optionalObject("attributes") {
          for f in attrs.fields {
            guard let a = e.attribute(named: f.key) else {
              throw FormatError(line: line, field: "attributes.\(f.key)", message: Self.unknown(e, f.key))
            }
            do {
              item.attributes.append((a, try Value.fromJSON(f.value, as: a.type)))
            } catch {
              throw FormatError(line: line, field: "attributes.\(f.key)", message: error.description)
            }
          }
        }
        if let rels = try r.optionalObject("relationships") {
          for f in rels.fields {
            guard let rel = e.relationship(named: f.key) else {
              throw FormatError(line: line, field: "relationships.\(f.key)", message: Self.unknown(e, f.key))
            }
            var targets: [String] = []
            switch f.value {
            case .null where !rel.isToMany: break
            case .string(let s) where !rel.isToMany: targets = [s]
            case .array(let a) where rel.isToMany:
              for t in a {
                guard case .string(let s) = t else {
                  throw FormatError(
                    line: line, field: "relationships.\(f.key)", message: "targets are identity strings")
                }
                targets.append(s)
              }
            default:
              throw FormatError(
                line: line, field: "relationships.\(f.key)",
                message: rel.isToMany
                  ? "a to-many relationship is an array of identities"
                  : "a to-one relationship is an identity string or null")
            }
            item.relationships.append((rel, targets))
          }
        }
        items.append(item)
      } catch let e as FormatError {
        throw e
      } catch let e as JSONReadError {
        throw FormatError(line: line, field: e.context, message: e.message)
      } catch {
        throw FormatError(line: line, message: "\(error)")
      }
    }
    // Every reference must name an object of the file, of the right entity.
    for item in items {
      for (r, targets) in item.relationships {
        for t in targets {
          guard let (_, entity) = lineOf[t] else {
            throw FormatError(
              line: item.line, field: "relationships.\(r.name)", message: "'\(t)' is not an id in this file")
          }
          guard model.isKind(entity, of: r.destination) else {
            throw FormatError(
              line: item.line, field: "relationships.\(r.name)",
              message: "'\(t)' is not a \(model.entity(r.destination)?.name ?? "?")")
          }
        }
      }
    }
  }

  static func unknown(_ e: Entity, _ name: String) -> String {
    if let near = Spelling.nearest(to: name, among: e.properties.map(\.name)) {
      return "\(e.name) has no property '\(name)' (did you mean '\(near)'?)"
    }
    return "\(e.name) has no property '\(name)'"
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
