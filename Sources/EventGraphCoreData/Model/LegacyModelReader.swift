import Foundation

/// Reads the legacy (Xcode 3) `elements` file of an `.xcdatamodel`: a keyed archive of
/// Xcode's own model classes (`XDPMModel`, `XDPMEntity`, `XDPMAttribute`,
/// `XDPMRelationship`), walked by hand.
///
/// The model's root package keeps the entities in `XDBucketForClassesstorage` (name →
/// entity); an entity keeps its properties in `XDBucketForOwnedAttributesstorage`. Every
/// Core Data setting is a *stereotype* property: the entity's or property's
/// `XDBucketForStereotypesstorage` holds stereotypes whose own properties are the settings,
/// each value in `_default` (`XD_PPSK_isOptional`, `XD_PAttK_attributeType` = 700 for a
/// string, `XD_PRK_destination`, …). The archive's dictionaries are in hash order, so
/// entities and properties are sorted by name, as Xcode shows them.
enum LegacyModelReader {
  static func read(_ bytes: [UInt8], file: String) throws(CoreDataError) -> CoreDataModel {
    let a = try KeyedArchive(bytes, file: file)
    let root = a.objects[a.root]
    guard let rootClass = a.className(a.root), rootClass.hasPrefix("XD"), rootClass.hasSuffix("Model") else {
      throw a.error(a.root, "the root object is a \(a.className(a.root) ?? "?"), not an Xcode data model (XDPMModel)")
    }
    guard let package = a.ref(root, "_xd_rootPackage"),
      let classes = a.ref(a.objects[package], "XDBucketForClassesstorage")
    else { throw a.error(a.root, "_xd_rootPackage: the model has no package of entities") }
    let (entries, names) = try a.entities(classes)
    var model = CoreDataModel()
    for (name, n) in entries {
      model.entities.append(try entity(a, n, name: name, names: names))
    }
    model.readNotes = a.notes.list
    return model
  }

  private static func entity(_ a: KeyedArchive, _ n: Int, name: String, names: [Int: String]) throws(CoreDataError)
    -> CoreDataEntity
  {
    let x = a.objects[n]
    var e = CoreDataEntity(name: name)
    let s = try stereotypes(a, n)
    e.isAbstract = (try a.object(s["isAbstract"], from: n)?.bool) ?? (x["_isAbstract"]?.bool ?? false)
    e.className = try text(a, s["entityClassName"], n)
    e.renamingIdentifier = try text(a, s["renamingIdentifier"], n)
    e.userInfo = try a.stringDictionary(s["userInfo"]?.uid, at: name)
    // The parent: a generalization refers to another entity of the model.
    if let g = a.ref(x, "XDBucketForGeneralizationsstorage") {
      for item in try a.array(g) {
        for (_, v) in a.objects[item].dictionary ?? [] {
          if let u = v.uid, u != n, let parent = names[u] { e.parent = parent }
        }
      }
    }
    guard let props = a.ref(x, "XDBucketForOwnedAttributesstorage") else { return e }
    for (pname, p) in try a.dictionary(props).sorted(by: { $0.key < $1.key }) {
      let ps = try stereotypes(a, p)
      let cls = a.className(p) ?? ""
      let optional = (try a.object(ps["isOptional"], from: p)?.bool) ?? true
      let transient = (try a.object(ps["isTransient"], from: p)?.bool) ?? false
      let userInfo = try a.stringDictionary(ps["userInfo"]?.uid, at: "\(name).\(pname)")
      let renaming = try text(a, ps["renamingIdentifier"], p)
      if cls.contains("Relationship") {
        guard let d = try a.object(ps["destination"], from: p), let du = ps["destination"]?.uid,
          let destination = names[du] ?? d["_name"].flatMap({ try? a.object($0, from: du)?.string })
        else { throw a.error(p, "\(name).\(pname): a relationship without destination") }
        var r = CoreDataRelationship(name: pname, destination: destination)
        if let inv = ps["inverseRelationship"]?.uid, inv != 0, inv < a.objects.count {
          r.inverse = try a.string(a.objects[inv], "_name", at: inv)
        }
        r.isToMany = (try a.object(ps["isToMany"], from: p)?.bool) ?? false
        r.isOptional = optional
        r.isTransient = transient
        r.minCount = Int(max(0, min((try a.object(ps["minCount"], from: p)?.int) ?? 0, 1 << 31)))
        r.maxCount = Int(max(0, min((try a.object(ps["maxCount"], from: p)?.int) ?? 0, 1 << 31)))
        let ruleNumber = (try a.object(ps["deleteRule"], from: p)?.int) ?? 1
        guard let rule = CoreDataRelationship.deleteRule(number: ruleNumber) else {
          throw a.error(p, "\(name).\(pname): unknown delete rule \(ruleNumber)")
        }
        r.deleteRule = rule
        r.renamingIdentifier = renaming
        r.userInfo = userInfo
        e.relationships.append(r)
      } else if cls.contains("Attribute") {
        let number = (try a.object(ps["attributeType"], from: p)?.int) ?? 0
        guard let type = CoreDataAttributeType(number: number) else {
          throw a.error(p, "\(name).\(pname): unknown attribute type \(number)")
        }
        var attr = CoreDataAttribute(name: pname, type: type)
        attr.isOptional = optional
        attr.isTransient = transient
        attr.isIndexed = (try a.object(ps["isIndexed"], from: p)?.bool) ?? false
        attr.defaultValue = try text(a, ps["defaultValueAsString"], p)
        attr.minValue = try text(a, ps["minValueString"] ?? ps["minValue"], p)
        attr.maxValue = try text(a, ps["maxValueString"] ?? ps["maxValue"], p)
        attr.regularExpression = try text(a, ps["regularExpressionString"] ?? ps["regularExpression"], p)
        attr.transformer = try text(a, ps["valueTransformerName"], p)
        attr.renamingIdentifier = renaming
        attr.userInfo = userInfo
        e.attributes.append(attr)
      } else {
        // A fetched property: its request is not readable here; kept by name.
        e.fetchedProperties.append(CoreDataFetchRequest(name: pname, entity: "", predicate: nil))
      }
    }
    return e
  }

  /// The settings of an element: each stereotype property's name, without its `XD_…K_`
  /// prefix, and its `_default` value (inline, or a reference into the archive).
  private static func stereotypes(_ a: KeyedArchive, _ n: Int) throws(CoreDataError) -> [String: PlistValue] {
    guard let bucket = a.ref(a.objects[n], "XDBucketForStereotypesstorage") else { return [:] }
    var result: [String: PlistValue] = [:]
    for (_, s) in try a.dictionary(bucket) {
      guard let owned = a.ref(a.objects[s], "XDBucketForOwnedAttributesstorage") else { continue }
      for (key, p) in try a.dictionary(owned) {
        let short = key.range(of: "K_", options: .backwards).map { String(key[$0.upperBound...]) } ?? key
        if let v = a.objects[p]["_default"] { result[short] = v }
      }
    }
    return result
  }

  private static func text(_ a: KeyedArchive, _ v: PlistValue?, _ at: Int) throws(CoreDataError) -> String? {
    guard let value = try a.object(v, from: at) else { return nil }
    if value.string == "$null" { return nil }
    return value.text ?? value["NS.string"]?.string
  }
}
