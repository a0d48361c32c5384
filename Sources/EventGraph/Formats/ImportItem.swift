internal import EventGraphText

/// One line of an import file, checked against the model on its own: its keys, its
/// entity, every attribute and value, that each required attribute has a value, and the
/// shape of every relationship (its targets are resolved later, as they arrive).
struct ImportItem {
  var line: Int
  var label: String
  var entity: Entity
  /// Given values; `nil` is a `null` in the file (no value, not even the default).
  var attributes: [(Attribute, Value?)]
  /// Targets by the file's ids: at most one for a to-one, none for a `null`.
  var relationships: [(Relationship, [String])]

  /// Checks and reads line `line`.
  ///
  /// - Throws: ``FormatError`` naming the line and field.
  init(line: Int, bytes: ArraySlice<UInt8>, model: Model) throws(FormatError) {
    let json: JSON
    do {
      json = try JSON(parsing: bytes)
    } catch {
      throw FormatError(line: line, message: "invalid JSON at column \(error.column): \(error.message)")
    }
    do {
      try self.init(line: line, json: json, model: model)
    } catch let e as FormatError {
      throw e
    } catch let e as JSONReadError {
      throw FormatError(line: line, field: e.context, message: e.message)
    } catch {
      throw FormatError(line: line, message: "\(error)")
    }
  }

  private init(line: Int, json: JSON, model: Model) throws {
    let r = try JSONObjectReader(json, context: "")
    // `erased` and `locked` list the personal attributes an export could not open
    // (Docs/privacy.md): their values are `null`, and an import gives them none.
    try r.rejectUnknownKeys(allowed: ["id", "entity", "attributes", "relationships", "erased", "locked"])
    self.line = line
    label = try r.string("id")
    let name = try r.string("entity")
    guard let e = model.entity(named: name) else {
      throw FormatError(line: line, field: "entity", message: "unknown entity '\(name)'")
    }
    if e.isAbstract { throw FormatError(line: line, field: "entity", message: "entity '\(name)' is abstract") }
    entity = e
    attributes = []
    relationships = []
    if let attrs = try r.optionalObject("attributes") {
      attributes.reserveCapacity(attrs.fields.count)
      for f in attrs.fields {
        guard let a = e.attribute(named: f.key) else {
          throw FormatError(line: line, field: "attributes.\(f.key)", message: Self.unknown(e, f.key))
        }
        do {
          attributes.append((a, try Value.fromJSON(f.value, as: a.type)))
        } catch {
          throw FormatError(line: line, field: "attributes.\(f.key)", message: error.description)
        }
      }
    }
    // A required attribute with no value would refuse the whole commit, naming no line.
    for a in e.requiredAttributes {
      let given = attributes.first { $0.0.id == a.id }
      guard given?.1 == nil, given != nil || a.defaultValue == nil else { continue }
      throw FormatError(
        line: line, field: "attributes.\(a.name)",
        message: given == nil
          ? "\(e.name).\(a.name) is required and has no default: give it a value"
          : "\(e.name).\(a.name) is required: null gives it no value")
    }
    if let rels = try r.optionalObject("relationships") {
      for f in rels.fields {
        guard let rel = e.relationship(named: f.key) else {
          throw FormatError(line: line, field: "relationships.\(f.key)", message: Self.unknown(e, f.key))
        }
        relationships.append((rel, try Self.targets(f.value, rel, line: line, field: "relationships.\(f.key)")))
      }
    }
  }

  private static func targets(_ value: JSON, _ rel: Relationship, line: Int, field: String) throws -> [String] {
    switch value {
    case .null where !rel.isToMany: return []
    case .string(let s) where !rel.isToMany: return [s]
    case .array(let a) where rel.isToMany:
      return try a.map { t in
        guard case .string(let s) = t else {
          throw FormatError(line: line, field: field, message: "targets are identity strings")
        }
        return s
      }
    default:
      throw FormatError(
        line: line, field: field,
        message: rel.isToMany
          ? "a to-many relationship is an array of identities" : "a to-one relationship is an identity string or null")
    }
  }

  static func unknown(_ e: Entity, _ name: String) -> String {
    if let near = Spelling.nearest(to: name, among: e.properties.map(\.name)) {
      return "\(e.name) has no property '\(name)' (did you mean '\(near)'?)"
    }
    return "\(e.name) has no property '\(name)'"
  }
}
