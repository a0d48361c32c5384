import EventGraph
import Foundation

/// A Core Data XML store read and checked.
///
/// The file is `<database>` with `<databaseInfo>` (its UUID and a metadata
/// plist), then `<object type="ENTITY" id="z102">` elements holding `<attribute name type>`
/// values as text and `<relationship name idrefs>` lists. Entity names are upper-cased and
/// property names lower-cased, so names match without regard to case. The file is read
/// whole, as Core Data itself reads it.
struct XMLStorePlan: StorePlan {
  let version: CoreDataModelVersion
  let model: Model
  let uuid: String?
  let skipped: [String]
  let notes: [String]
  let objects: [PendingObject]
  let links: [(ObjectKey, String, ObjectKey)]
  let ids: [String]

  func coreDataID(_ key: ObjectKey, _ entity: String) -> String { ids[Int(key.row)] }

  func write(into sink: ObjectSink) throws {
    for o in objects { try sink.add(o) }
    for (s, r, t) in links { try sink.addLink(s, r, t) }
  }

  static func make(file: String, candidates: [(CoreDataModelVersion, Model)], lenient: Bool) throws -> XMLStorePlan {
    let bytes: [UInt8]
    do {
      bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
    } catch {
      throw CoreDataError(file: file, "cannot be read")
    }
    let root = try XMLTree.document(bytes, root: "database", what: "a Core Data XML store", file: file)
    let info = root.child("databaseInfo")
    var hashed: Set<String>? = nil
    if let plist = info?.child("metadata")?.child("plist") {
      do {
        hashed = (try XMLPlist.value(ofPlist: plist)["NSStoreModelVersionHashes"]?.dictionary).map {
          Set($0.map(\.key))
        }
      } catch {
        throw CoreDataError(file: file, "databaseInfo metadata: \(error)")
      }
    }
    let elements = root.children("object")
    var reasons: [String] = []
    for (v, m) in candidates.reversed() {
      if let hashed, hashed != Set(m.entities.map(\.name)) {
        reasons.append(
          "version \(v.version): the store's metadata names the entities \(hashed.sorted().joined(separator: ", "))")
        continue
      }
      do {
        var reader = XMLObjectReader(model: m, elements: elements)
        let (objects, links, bad, unknown) = try reader.read(lenient: lenient)
        if !bad.isEmpty && !lenient {
          throw CoreDataError(
            file: file,
            "\(bad.count) object(s) break model version \(v.version): " + bad.prefix(10).joined(separator: "; "),
            remedy: .lenient)
        }
        return XMLStorePlan(
          version: v, model: m, uuid: info?.child("UUID")?.text.trimmingCharacters(in: .whitespacesAndNewlines),
          skipped: bad, notes: unknown, objects: objects, links: links, ids: reader.ids)
      } catch let e as LayoutMismatch {
        reasons.append("version \(v.version): " + e.reasons.joined(separator: "; "))
      }
    }
    throw CoreDataError(file: file, "the store matches no version of the model: " + reasons.joined(separator: " | "))
  }
}

/// The objects of an XML store read with one model version.
struct XMLObjectReader {
  let model: Model
  let elements: [XMLTree]
  private(set) var ids: [String] = []

  init(model: Model, elements: [XMLTree]) {
    self.model = model
    self.elements = elements
  }

  /// The objects, their links (each once, from the to-many side where there is one), the
  /// objects that break the model, and the properties the model does not know.
  mutating func read(lenient: Bool) throws(LayoutMismatch) -> (
    [PendingObject], [(ObjectKey, String, ObjectKey)], [String], [String]
  ) {
    let entities = Dictionary(model.entities.map { ($0.name.uppercased(), $0) }, uniquingKeysWith: { a, _ in a })
    var index: [String: Int] = [:]
    var kinds: [Entity] = []
    for (i, o) in elements.enumerated() {
      let type = o.attributes["type"] ?? ""
      guard let e = entities[type.uppercased()] else {
        throw LayoutMismatch(reasons: ["line \(o.line): object type '\(type)' is no entity of the model"])
      }
      let id = o.attributes["id"] ?? "line \(o.line)"
      ids.append(id)
      index[id] = i
      kinds.append(e)
    }
    var bad: [String] = []
    var unknown = Set<String>()
    var objects: [PendingObject] = []
    // Links as their own side lists them come first, in file order, so an ordered to-many
    // keeps the order of its idrefs; those only the other side lists follow.
    var (own, other): ([(ObjectKey, String, ObjectKey)], [(ObjectKey, String, ObjectKey)]) = ([], [])
    for (i, o) in elements.enumerated() {
      let e = kinds[i]
      let at = "object \(ids[i]) (line \(o.line))"
      do throws(BadRow) {
        var values: [(Attribute, Value?)] = []
        for a in o.children("attribute") {
          let name = a.attributes["name"] ?? ""
          guard let attr = e.attributes.first(where: { $0.name.lowercased() == name.lowercased() && !$0.isTransient })
          else {
            unknown.insert("\(e.name).\(name)")
            continue
          }
          values.append((attr, try Self.value(a.text, attr, at: at)))
        }
        for attr in e.attributes where !attr.isOptional && !attr.isTransient && attr.defaultValue == nil {
          guard values.contains(where: { $0.0.id == attr.id }) else {
            throw BadRow(table: "", row: at, message: "\(e.name).\(attr.name) is required and has no value")
          }
        }
        var mine: [(link: (ObjectKey, String, ObjectKey), flipped: Bool)] = []
        for r in o.children("relationship") {
          let name = r.attributes["name"] ?? ""
          guard let rel = e.relationships.first(where: { $0.name.lowercased() == name.lowercased() }) else {
            unknown.insert("\(e.name).\(name)")
            continue
          }
          for ref in (r.attributes["idrefs"] ?? "").split(separator: " ") {
            guard let t = index[String(ref)] else {
              throw BadRow(table: "", row: at, message: "\(e.name).\(rel.name) names \(ref), which is not in the store")
            }
            mine.append(canonical(i, rel, e, t, kinds[t]))
          }
        }
        objects.append(
          PendingObject(key: ObjectKey(table: 0, row: Int64(i)), entity: e, values: values, links: []))
        for m in mine {
          if m.flipped { other.append(m.link) } else { own.append(m.link) }
        }
      } catch {
        bad.append(error.description.hasPrefix("table  ") ? String(error.description.dropFirst(7)) : error.description)
      }
    }
    var seen = Set<String>()
    var links = (own + other).filter { seen.insert("\($0.0.row) \($0.1) \($0.2.row)").inserted }
    if !bad.isEmpty && lenient {
      // Links to a skipped object go with it.
      let kept = Set(objects.map(\.key.row))
      links.removeAll { !kept.contains($0.0.row) || !kept.contains($0.2.row) }
    }
    return (objects, links, bad, unknown.sorted().map { "property \($0) is not in the model: ignored" })
  }

  /// A link as the side that keeps its order writes it: the to-many (ordered first) side of
  /// a relationship with inverse, so both sides listing it make one link.
  private func canonical(_ s: Int, _ r: Relationship, _ se: Entity, _ t: Int, _ te: Entity) -> (
    link: (ObjectKey, String, ObjectKey), flipped: Bool
  ) {
    let key = (ObjectKey(table: 0, row: Int64(s)), r.name, ObjectKey(table: 0, row: Int64(t)))
    guard let invID = r.inverse, let inv = te.relationships.first(where: { $0.id == invID }) else {
      return (key, false)
    }
    func rank(_ x: Relationship, _ e: Entity) -> (Int, String) {
      (x.isOrdered ? 0 : x.isToMany ? 1 : 2, e.name + "." + x.name)
    }
    return rank(r, se) <= rank(inv, te) ? (key, false) : ((key.2, inv.name, key.0), true)
  }

  /// An attribute's text as a value of its type.
  static func value(_ text: String, _ a: Attribute, at: String) throws(BadRow) -> Value {
    let t = text.trimmingCharacters(in: .whitespacesAndNewlines)
    func fail() -> BadRow { BadRow(table: "", row: at, message: "\(a.name): '\(t)' is not a \(a.type.rawValue)") }
    switch a.type {
    case .string: return .string(text)
    case .uri: return .uri(t)
    case .int16: guard let n = Int16(t) else { throw fail() }; return .int16(n)
    case .int32: guard let n = Int32(t) else { throw fail() }; return .int32(n)
    case .int64: guard let n = Int64(t) else { throw fail() }; return .int64(n)
    case .double: guard let d = Double(t), d.isFinite else { throw fail() }; return .double(d)
    case .float: guard let d = Float(t), d.isFinite else { throw fail() }; return .float(d)
    case .decimal: guard let d = Decimal(string: t) else { throw fail() }; return .decimal(d)
    case .boolean:
      guard let b = ["1": true, "0": false, "YES": true, "NO": false, "true": true, "false": false][t] else {
        throw fail()
      }
      return .boolean(b)
    case .date:
      guard let s = Double(t), s.isFinite else { throw fail() }
      return .date(Date(timeIntervalSince1970: s + EventGraphDates.epoch2001))
    case .binary:
      guard let d = Data(base64Encoded: t, options: .ignoreUnknownCharacters) else { throw fail() }
      return .binary([UInt8](d))
    case .uuid: guard let u = UUID(uuidString: t) else { throw fail() }; return .uuid(u)
    }
  }
}
