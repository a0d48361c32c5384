internal import EventGraphText
import Foundation

/// An `NSKeyedArchiver` archive walked by hand.
///
/// The `$objects` table, the `$top` root and the references (`UID`s) between them. Nothing is instantiated: the readers ask for an
/// object's keys, its class name, and the strings, dictionaries and arrays it refers to.
struct KeyedArchive {
  let objects: [PlistValue]
  let root: Int
  /// The file, for errors.
  let file: String
  /// What reading kept in another form or left out (user info that is not text), for the
  /// import's report: shared by the copies of this value the readers pass around.
  let notes = ArchiveNotes()

  init(_ bytes: [UInt8], file: String) throws(CoreDataError) {
    self.file = file
    let plist: BinaryPlist
    let top: PlistValue
    do {
      plist = try BinaryPlist(bytes)
      top = try plist.topValue()
    } catch {
      throw CoreDataError(file: file, "\(error)")
    }
    guard top["$archiver"]?.string == "NSKeyedArchiver", let objects = top["$objects"]?.array else {
      throw CoreDataError(file: file, "not a keyed archive (no $archiver NSKeyedArchiver and $objects)")
    }
    guard let root = top["$top"]?["root"]?.uid, root > 0, root < objects.count else {
      throw CoreDataError(file: file, "$top: the archive has no root object")
    }
    // Every reference must name an object of the table: a missing one is reported here,
    // with the object that holds it, rather than read as absent.
    for (i, o) in objects.enumerated() {
      if let bad = Self.danglingReference(o, count: objects.count) {
        throw CoreDataError(file: file, "$objects[\(i)]: a reference to object \(bad), which does not exist")
      }
    }
    self.objects = objects
    self.root = root
  }

  /// The first reference inside `value` past the end of a table of `count` objects.
  private static func danglingReference(_ value: PlistValue, count: Int) -> Int? {
    switch value {
    case .uid(let u): return u < count ? nil : u
    case .array(let a): return a.lazy.compactMap { danglingReference($0, count: count) }.first
    case .dictionary(let d): return d.lazy.compactMap { danglingReference($0.value, count: count) }.first
    default: return nil
    }
  }

  func error(_ at: Int, _ what: String) -> CoreDataError {
    CoreDataError(file: file, "$objects[\(at)]: \(what)")
  }

  /// The object a reference names; `nil` for `$null` (UID 0).
  func object(_ ref: PlistValue?, from: Int) throws(CoreDataError) -> PlistValue? {
    guard let ref else { return nil }
    guard let u = ref.uid else { return ref }  // an inline value (numbers, booleans)
    guard u != 0 else { return nil }
    guard u < objects.count else { throw error(from, "a reference to object \(u), which does not exist") }
    return objects[u]
  }

  /// The object number a key of `object` refers to, or `nil`.
  func ref(_ object: PlistValue, _ key: String) -> Int? {
    guard let u = object[key]?.uid, u != 0, u < objects.count else { return nil }
    return u
  }

  /// A string the key refers to.
  func string(_ object: PlistValue, _ key: String, at: Int) throws(CoreDataError) -> String? {
    guard let v = try self.object(object[key], from: at) else { return nil }
    if case .string(let s) = v, s != "$null" { return s }
    if case .string = v { return nil }
    // NSMutableString is archived as an object holding NS.string.
    if let s = v["NS.string"]?.string { return s }
    throw error(at, "\(key): expected a string")
  }

  /// The class name of the object numbered `n`.
  func className(_ n: Int) -> String? {
    guard n < objects.count, let c = objects[n]["$class"]?.uid, c < objects.count else { return nil }
    return objects[c]["$classname"]?.string
  }

  /// An archived `NSDictionary`: its keys (resolved to strings) and the object numbers of its
  /// values, in archive order.
  func dictionary(_ n: Int) throws(CoreDataError) -> [(key: String, value: Int)] {
    let d = objects[n]
    guard let keys = d["NS.keys"]?.array, let values = d["NS.objects"]?.array, keys.count == values.count else {
      throw error(n, "expected a dictionary (NS.keys and NS.objects)")
    }
    var result: [(key: String, value: Int)] = []
    for (k, v) in zip(keys, values) {
      guard let ks = try object(k, from: n)?.string else { throw error(n, "a dictionary key that is not a string") }
      guard let vu = v.uid, vu < objects.count else { throw error(n, "\(ks): a value that is not a reference") }
      result.append((ks, vu))
    }
    return result
  }

  /// The entities of a model archive: an archived dictionary of name → entity, sorted by
  /// name (archives keep hash order), and each entity's name by object number (references
  /// between entities are object numbers).
  func entities(_ n: Int) throws(CoreDataError) -> (sorted: [(key: String, value: Int)], names: [Int: String]) {
    let entries = try dictionary(n)
    var names: [Int: String] = [:]
    for (name, u) in entries { names[u] = name }
    return (entries.sorted { $0.key < $1.key }, names)
  }

  /// An archived `NSArray` or `NSSet`: the object numbers of its elements.
  func array(_ n: Int) throws(CoreDataError) -> [Int] {
    guard let items = objects[n]["NS.objects"]?.array else { throw error(n, "expected an array (NS.objects)") }
    var result: [Int] = []
    for i in items {
      guard let u = i.uid, u < objects.count else { throw error(n, "an element that is not a reference") }
      result.append(u)
    }
    return result
  }

  /// An archived dictionary of user info, each value as text.
  ///
  /// A string as it is, any other value Core Data accepts (numbers, arrays, dictionaries,
  /// dates, data) as its JSON text, noted; a value with no JSON form is left out, noted.
  /// User info never refuses a model.
  func stringDictionary(_ n: Int?, at place: String) throws(CoreDataError) -> [String: String] {
    guard let n, n != 0 else { return [:] }
    var result: [String: String] = [:]
    for (k, v) in try dictionary(n) {
      if let text = objects[v].text ?? objects[v]["NS.string"]?.string {
        result[k] = text
      } else if let json = jsonValue(v, depth: 0) {
        let text = json.serialized()
        result[k] = text
        notes.list.append("\(place): user info '\(k)' is not text: kept as its JSON, \(text.prefix(80))")
      } else {
        notes.list.append(
          "\(place): user info '\(k)' (\(className(v) ?? "a value")) has no JSON form: left out")
      }
    }
    return result
  }

  /// An archived value as JSON: plist numbers, booleans, strings and data (base64), and
  /// `NSArray`/`NSSet`/`NSDictionary`/`NSString`/`NSDate` objects of them; `nil` for anything
  /// else, or past 32 levels (an archive may refer back to itself).
  func jsonValue(_ n: Int, depth: Int) -> JSON? {
    guard depth < 32, n < objects.count else { return nil }
    let o = objects[n]
    switch o {
    case .string(let s): return s == "$null" ? .null : .string(s)
    case .int(let i): return .int(i)
    case .real(let d): return d.isFinite ? .double(d) : nil
    case .bool(let b): return .bool(b)
    case .data(let d): return .string(Data(d).base64EncodedString())
    case .date(let t): return .string(ISO8601.format(Date(timeIntervalSince1970: t + EventGraphDates.epoch2001)))
    default: break
    }
    if let s = o["NS.string"]?.string { return .string(s) }
    if let t = o["NS.time"], case .real(let seconds) = t {
      return .string(ISO8601.format(Date(timeIntervalSince1970: seconds + EventGraphDates.epoch2001)))
    }
    if let keys = o["NS.keys"]?.array, let values = o["NS.objects"]?.array, keys.count == values.count {
      var fields: [JSONField] = []
      for (k, v) in zip(keys, values) {
        guard let ku = k.uid, let key = objects[ku].text ?? objects[ku]["NS.string"]?.string, let vu = v.uid,
          let value = jsonValue(vu, depth: depth + 1)
        else { return nil }
        fields.append(JSONField(key, value))
      }
      return .object(fields.sorted { $0.key < $1.key })
    }
    if let items = o["NS.objects"]?.array {
      var elements: [JSON] = []
      for i in items {
        guard let u = i.uid, let value = jsonValue(u, depth: depth + 1) else { return nil }
        elements.append(value)
      }
      return .array(elements)
    }
    return nil
  }
}

/// The notes of one archive's reading (``KeyedArchive/notes``).
final class ArchiveNotes {
  var list: [String] = []
}
