internal import EventGraphText
import Foundation

/// One version of a Core Data model, read from its file.
public struct CoreDataModelVersion: Sendable, Equatable {
  /// The version's file name without extension (`Model 2`).
  public var name: String
  /// 1, 2, … in the order the versions are read (the natural order of their names).
  public var version: Int
  /// Whether `.xccurrentversion` (or a `.momd`'s `VersionInfo.plist`) names it current.
  public var isCurrent: Bool
  /// The file read: `contents`, `elements` or a `.mom`.
  public var file: String
  /// `xml`, `legacy` or `compiled`.
  public var format: String
  public var model: CoreDataModel
}

/// Finds and reads every version of a model: an `.xcdatamodeld` bundle, one
/// `.xcdatamodel` (XML `contents` or legacy `elements`), a compiled `.momd` or `.mom`,
/// or one of those files itself.
public enum CoreDataModelBundle {
  /// The model's name (the bundle's, without extension) and its versions in order.
  ///
  /// Versions are ordered by their names in natural order (`Model`, `Model 2`, …,
  /// `Model 10`), as Xcode names new versions; the current one is marked, not moved.
  public static func read(_ path: String) throws(CoreDataError) -> (name: String, versions: [CoreDataModelVersion]) {
    let url = URL(fileURLWithPath: path)
    let ext = url.pathExtension
    let name = url.deletingPathExtension().lastPathComponent
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
      throw CoreDataError(file: path, "no such file or directory")
    }
    if !isDirectory.boolValue {
      let model = try readFile(path)
      return (
        ext == "mom" ? name : url.deletingLastPathComponent().deletingPathExtension().lastPathComponent,
        [
          CoreDataModelVersion(
            name: name, version: 1, isCurrent: true, file: path, format: model.format, model: model.model)
        ]
      )
    }
    let children = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { !$0.hasPrefix(".") }
    let bundled = children.filter { $0.hasSuffix(".xcdatamodel") || $0.hasSuffix(".mom") }
    if ext == "xcdatamodeld" || ext == "momd" || (!bundled.isEmpty && ext != "xcdatamodel") {
      guard !bundled.isEmpty else {
        throw CoreDataError(file: path, "a model bundle with no .xcdatamodel or .mom version inside")
      }
      let current = try currentVersion(path, compiled: ext == "momd" || bundled.allSatisfy { $0.hasSuffix(".mom") })
      var versions: [CoreDataModelVersion] = []
      for (i, child) in bundled.sorted(by: naturallyBefore).enumerated() {
        let vname = URL(fileURLWithPath: child).deletingPathExtension().lastPathComponent
        let read = try readVersion(path + "/" + child)
        versions.append(
          CoreDataModelVersion(
            name: vname, version: i + 1, isCurrent: current == child || current == vname, file: read.file,
            format: read.format, model: read.model))
      }
      if current == nil, !versions.isEmpty { versions[versions.count - 1].isCurrent = true }
      return (name, versions)
    }
    let read = try readVersion(path)
    return (
      name,
      [
        CoreDataModelVersion(
          name: name, version: 1, isCurrent: true, file: read.file, format: read.format, model: read.model)
      ]
    )
  }

  /// One `.xcdatamodel` directory (its `contents`, else its `elements`) or a `.mom` file.
  static func readVersion(_ path: String) throws(CoreDataError) -> (file: String, format: String, model: CoreDataModel)
  {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
      throw CoreDataError(file: path, "no such file or directory")
    }
    guard isDirectory.boolValue else {
      let r = try readFile(path)
      return (path, r.format, r.model)
    }
    for f in ["contents", "elements"] where FileManager.default.fileExists(atPath: path + "/" + f) {
      let r = try readFile(path + "/" + f)
      return (path + "/" + f, r.format, r.model)
    }
    throw CoreDataError(
      file: path, "not a Core Data model: no 'contents' (XML) or 'elements' (legacy) file inside")
  }

  /// A model file, told apart by its first bytes: XML `contents`, or a keyed archive that
  /// is Xcode's legacy `elements` or a compiled `.mom`.
  public static func readFile(_ path: String) throws(CoreDataError) -> (format: String, model: CoreDataModel) {
    let bytes: [UInt8]
    do {
      bytes = try FileReading.contents(atPath: path)
    } catch {
      throw CoreDataError(file: path, error.reason)
    }
    return try read(bytes, file: path)
  }

  /// A model from its bytes (also what the fuzzer calls).
  public static func read(_ bytes: [UInt8], file: String) throws(CoreDataError) -> (
    format: String, model: CoreDataModel
  ) {
    if BinaryPlist.isBinaryPlist(bytes) {
      let archive = try KeyedArchive(bytes, file: file)
      if archive.className(archive.root) == "NSManagedObjectModel" {
        return ("compiled", try CompiledModelReader.read(bytes, file: file))
      }
      return ("legacy", try LegacyModelReader.read(bytes, file: file))
    }
    let start = bytes.drop {
      $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 || $0 == 0xEF || $0 == 0xBB || $0 == 0xBF
    }
    guard start.first == UInt8(ascii: "<") else {
      throw CoreDataError(
        file: file, "neither an XML model nor a binary property list (a model file in neither format)")
    }
    return ("xml", try XMLModelReader.read(bytes, file: file))
  }

  /// The current version's file name, from `.xccurrentversion` or `VersionInfo.plist`.
  private static func currentVersion(_ bundle: String, compiled: Bool) throws(CoreDataError) -> String? {
    let file = bundle + (compiled ? "/VersionInfo.plist" : "/.xccurrentversion")
    guard FileManager.default.fileExists(atPath: file) else { return nil }
    do {
      let plist = try XMLPlist.read(try FileReading.contents(atPath: file))
      return (plist["_XCCurrentVersionName"] ?? plist["NSManagedObjectModel_CurrentVersionName"])?.string
    } catch let e as PlistError {
      throw CoreDataError(file: file, e.message)
    } catch {
      throw CoreDataError(file: file, "\(error)")
    }
  }

  /// Natural order: runs of digits compare as numbers (`Model 2` before `Model 10`).
  static func naturallyBefore(_ a: String, _ b: String) -> Bool {
    func parts(_ s: String) -> [(String, Int?)] {
      var result: [(String, Int?)] = []
      var current = ""
      var digits = false
      for c in s {
        if c.isASCII && c.isNumber != digits && !current.isEmpty {
          result.append((current, digits ? Int(current) : nil))
          current = ""
        }
        digits = c.isASCII && c.isNumber
        current.append(c)
      }
      if !current.isEmpty { result.append((current, digits ? Int(current) : nil)) }
      return result
    }
    let x = parts(URL(fileURLWithPath: a).deletingPathExtension().lastPathComponent)
    let y = parts(URL(fileURLWithPath: b).deletingPathExtension().lastPathComponent)
    for (p, q) in zip(x, y) where p.0 != q.0 {
      if let m = p.1, let n = q.1, m != n { return m < n }
      return p.0 < q.0
    }
    return x.count < y.count
  }
}
