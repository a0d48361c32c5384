import EventGraph
internal import EventGraphText
import Foundation

/// Which keys the model file writer may use.
public struct ModelWriterOptions: Sendable, Equatable {
  /// Whether to write the constraint and user-info keys.
  ///
  /// They are (`minValue`, `maxValue`, `minLength`, `maxLength`,
  /// `regularExpression`, type `transformable` with `transformer`, `userInfo`,
  /// `uniquenessConstraints`). Without them, what they would say is reported instead.
  public var rules: Bool
  /// Whether to write the attribute key `transient`.
  ///
  /// Without it, transient attributes are left out and reported.
  public var transient: Bool

  public init(rules: Bool = true, transient: Bool = true) {
    self.rules = rules
    self.transient = transient
  }

  /// Every key.
  public static let full = ModelWriterOptions()

  /// The keys this build's model loader accepts: found by loading a small model that uses
  /// them, so a tool built where the model file has grown writes them, and one built
  /// before does not.
  public static let loadable: ModelWriterOptions = {
    func loads(_ text: String) -> Bool { (try? Model(json: Array(text.utf8))) != nil }
    let rules = loads(
      #"{"name": "P", "version": 1, "userInfo": {"k": "v"}, "entities": [{"name": "E", "userInfo": {}, "#
        + #""uniquenessConstraints": [["a"]], "attributes": [{"name": "a", "type": "string", "minLength": 1, "#
        + #""maxLength": 2, "regularExpression": "x", "userInfo": {}}, {"name": "n", "type": "int16", "minValue": 1, "#
        + #""maxValue": 2}, {"name": "t", "type": "transformable", "transformer": "T", "optional": true}], "#
        + #""relationships": [{"name": "r", "destination": "E", "userInfo": {}}]}]}"#)
    let transient = loads(
      #"{"name": "P", "version": 1, "entities": [{"name": "E", "attributes": [{"name": "a", "type": "string", "transient": true}]}]}"#
    )
    return ModelWriterOptions(rules: rules, transient: transient)
  }()
}

/// A model file made from a Core Data model version, and what did not fit.
public struct ModelFileOutput: Sendable, Equatable {
  /// The model file's text (`*.model.json`).
  public var text: String
  public var entityCount: Int
  /// Each thing of the Core Data model the file does not hold as itself, by name: kept in a
  /// `userInfo`, or left out (and why).
  public var notes: [String]
}

extension CoreDataModel {
  /// The EventGraph model file for this version.
  ///
  /// - Throws: ``CoreDataError`` naming the entity and property when an attribute has a type
  ///   no EventGraph type holds, or a default, minimum or maximum that is not of its type.
  public func modelFile(name: String, version: Int, file: String, options: ModelWriterOptions = .full)
    throws(CoreDataError) -> ModelFileOutput
  {
    var writer = ModelFileWriter(model: self, file: file, options: options)
    let json = try writer.document(name: name, version: version)
    return ModelFileOutput(text: json.serialized(pretty: true) + "\n", entityCount: entities.count, notes: writer.notes)
  }
}

/// Builds the JSON of a model file from a ``CoreDataModel`` (`Docs/coredata.md` has the
/// table of what each Core Data setting becomes).
struct ModelFileWriter {
  let model: CoreDataModel
  let file: String
  let options: ModelWriterOptions
  var notes: [String] = []
  private let byName: [String: CoreDataEntity]

  init(model: CoreDataModel, file: String, options: ModelWriterOptions) {
    self.model = model
    self.file = file
    self.options = options
    self.byName = Dictionary(model.entities.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
  }

  mutating func document(name: String, version: Int) throws(CoreDataError) -> JSON {
    var fields = [JSONField("name", .string(name)), JSONField("version", .int(Int64(version)))]
    notes += model.readNotes
    var info = model.userInfo
    for r in model.fetchRequests {
      let text = r.entity + (r.predicate.map { " where \($0)" } ?? "")
      keep(&info, "coreData.fetchRequest.\(r.name)", text, "fetch request template \(r.name) (\(text))")
    }
    for c in model.configurations {
      let text = c.entities.joined(separator: ", ")
      keep(&info, "coreData.configuration.\(c.name)", text, "configuration \(c.name) (\(text))")
    }
    if !info.isEmpty, options.rules { fields.append(JSONField("userInfo", Self.userInfo(info))) }
    if !model.userInfo.isEmpty, !options.rules {
      notes.append("model user info (\(model.userInfo.count) entries): not kept")
    }
    var entities: [JSON] = []
    for e in model.entities { entities.append(try entity(e)) }
    fields.append(JSONField("entities", .array(entities)))
    return .object(fields)
  }

  /// Keeps a setting with no EventGraph meaning in a user info under `key` (when the file
  /// may hold user info) and notes it by name either way.
  private mutating func keep(_ info: inout [String: String], _ key: String, _ value: String, _ what: String) {
    if options.rules {
      info[key] = value
      notes.append("\(what): kept as userInfo \(key)")
    } else {
      notes.append("\(what): not kept")
    }
  }

  private mutating func entity(_ e: CoreDataEntity) throws(CoreDataError) -> JSON {
    var f = [JSONField("name", .string(e.name))]
    if let p = e.parent { f.append(JSONField("parent", .string(p))) }
    if e.isAbstract { f.append(JSONField("abstract", .bool(true))) }
    if let r = e.renamingIdentifier, r != e.name { f.append(JSONField("renamingIdentifier", .string(r))) }
    var info = e.userInfo
    if !e.userInfo.isEmpty, !options.rules {
      notes.append("\(e.name): user info (\(e.userInfo.count) entries): not kept")
    }
    for p in e.fetchedProperties {
      let text = p.entity + (p.predicate.map { " where \($0)" } ?? "")
      keep(&info, "coreData.fetchedProperty.\(p.name)", text, "\(e.name).\(p.name): fetched property (\(text))")
    }
    // A fetch index on one attribute is `indexed`; one over several is kept by name.
    var indexed = Set(e.attributes.filter(\.isIndexed).map(\.name))
    for i in e.fetchIndexes {
      if i.properties.count == 1, e.attributes.contains(where: { $0.name == i.properties[0] }) {
        indexed.insert(i.properties[0])
      } else {
        let text = i.properties.joined(separator: ", ")
        keep(&info, "coreData.fetchIndex.\(i.name)", text, "\(e.name): fetch index \(i.name) (\(text))")
      }
    }
    var attributes: [JSON] = []
    for a in e.attributes {
      if let d = a.derivation {
        keep(&info, "coreData.derived.\(a.name)", d, "\(e.name).\(a.name): derived attribute (\(d))")
        continue
      }
      if a.isTransient && !options.transient {
        notes.append("\(e.name).\(a.name): transient attribute: left out (the store keeps no value for it)")
        continue
      }
      attributes.append(try attribute(a, in: e, indexed: indexed.contains(a.name)))
    }
    f.append(JSONField("attributes", .array(attributes)))
    var relationships: [JSON] = []
    for r in e.relationships {
      if r.isTransient {
        notes.append("\(e.name).\(r.name): transient relationship: left out")
        continue
      }
      relationships.append(relationship(r, in: e))
    }
    f.append(JSONField("relationships", .array(relationships)))
    if !e.uniquenessConstraints.isEmpty {
      let text = e.uniquenessConstraints.map { "(" + $0.joined(separator: ", ") + ")" }.joined(separator: ", ")
      if options.rules {
        f.append(
          JSONField(
            "uniquenessConstraints", .array(e.uniquenessConstraints.map { .array($0.map { JSON.string($0) }) })))
      } else {
        notes.append("\(e.name): uniqueness constraints \(text): not kept")
      }
    }
    if !info.isEmpty, options.rules { f.append(JSONField("userInfo", Self.userInfo(info))) }
    return .object(f)
  }

  private mutating func relationship(_ r: CoreDataRelationship, in e: CoreDataEntity) -> JSON {
    var g = [JSONField("name", .string(r.name)), JSONField("destination", .string(r.destination))]
    if r.isToMany { g.append(JSONField("toMany", .bool(true))) }
    if r.isOrdered && r.isToMany { g.append(JSONField("ordered", .bool(true))) }
    if !r.isOptional { g.append(JSONField("optional", .bool(false))) }
    // A to-one's counts (Core Data writes minCount 1, maxCount 1) say nothing more.
    if r.isToMany, r.minCount > 0 { g.append(JSONField("minCount", .int(Int64(r.minCount)))) }
    if r.isToMany, r.maxCount > 0 { g.append(JSONField("maxCount", .int(Int64(r.maxCount)))) }
    if let inverse = r.inverse {
      if pointsBack(inverse, of: r, in: e) {
        g.append(JSONField("inverse", .string(inverse)))
      } else {
        notes.append(
          "\(e.name).\(r.name): inverse '\(inverse)' does not name \(r.name) back in \(r.destination): written without inverse"
        )
      }
    }
    if r.deleteRule != "nullify" { g.append(JSONField("deleteRule", .string(r.deleteRule))) }
    if let x = r.renamingIdentifier, x != r.name { g.append(JSONField("renamingIdentifier", .string(x))) }
    if let info = userInfo(r.userInfo, of: "\(e.name).\(r.name)") { g.append(info) }
    return .object(g)
  }

  /// Whether the destination (or an ancestor of it) has `inverse`, whose own inverse is `r`
  /// on `e` or an ancestor of `e`.
  private func pointsBack(_ inverse: String, of r: CoreDataRelationship, in e: CoreDataEntity) -> Bool {
    guard let back = relationship(inverse, in: r.destination), !back.isTransient else { return false }
    return back.inverse == r.name && relationship(r.name, in: e.name) != nil
      && isKind(e.name, of: back.destination)
  }

  private func relationship(_ name: String, in entity: String) -> CoreDataRelationship? {
    var current: String? = entity
    var hops = 0
    while let c = current, let ce = byName[c], hops <= byName.count {
      if let r = ce.relationships.first(where: { $0.name == name }) { return r }
      current = ce.parent
      hops += 1
    }
    return nil
  }

  private func isKind(_ entity: String, of ancestor: String) -> Bool {
    var current: String? = entity
    var hops = 0
    while let c = current, hops <= byName.count {
      if c == ancestor { return true }
      current = byName[c]?.parent
      hops += 1
    }
    return false
  }

  /// A property's `userInfo` key when the file may hold it; otherwise a note.
  mutating func userInfo(_ info: [String: String], of place: String) -> JSONField? {
    guard !info.isEmpty else { return nil }
    guard options.rules else {
      notes.append("\(place): user info (\(info.count) entries): not kept")
      return nil
    }
    return JSONField("userInfo", Self.userInfo(info))
  }

  static func userInfo(_ info: [String: String]) -> JSON {
    .object(info.keys.sorted().map { JSONField($0, .string(info[$0] ?? "")) })
  }
}
