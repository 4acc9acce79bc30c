/* Reading a cubin: ELF headers, sections, kernels, symbols, .nv.info records, relocations and
 * constant banks.  libelf/gelf parse and locate; the bytes stay in our own image, which is
 * what gets written back, so untouched bytes are always identical. */
#include "cubin_internal.h"
#include "util/util.h"

#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- string pool (offsets are turned into pointers once parsing is done) ---- */

static st_status pool_add(st_cubin_view *v, const char *s, size_t *off)
{
	size_t n = strlen(s) + 1;
	if (v->strings_len + n > v->strings_cap) {
		size_t cap = v->strings_cap ? v->strings_cap * 2 : 1024;
		while (cap < v->strings_len + n)
			cap *= 2;
		char *p = realloc(v->strings, cap);
		if (!p)
			return ST_ENOMEM;
		v->strings = p;
		v->strings_cap = cap;
	}
	/* names end up in one-line messages and output: control characters become '?' */
	for (size_t i = 0; i + 1 < n; i++)
		v->strings[v->strings_len + i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	v->strings[v->strings_len + n - 1] = 0;
	*off = v->strings_len;
	v->strings_len += n;
	return ST_OK;
}

/* Names are stored as offsets cast to pointers while the pool may move; fixed up at the end. */
#define OFF2PTR(v, p) ((p) = (v)->strings + (size_t)(uintptr_t)(p))

void st_cubin_view_free(st_cubin_view *v)
{
	if (v->refs) {
		for (size_t k = 0; k < v->nkernels; k++)
			st_refs_free(&v->refs[k]);
		free(v->refs);
	}
	free(v->sections);
	free(v->strings);
	free(v->kernels);
	free(v->nvinfo);
	free(v->symbols);
	free(v->relocs);
	free(v->reloc_entry);
	free(v->consts);
	memset(v, 0, sizeof *v);
}

static void *grow(void *p, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap)
		return p;
	size_t c = *cap ? *cap * 2 : 16;
	void *q = realloc(p, c * elem);
	if (q)
		*cap = c;
	return q;
}

/* ---- .nv.info records ---- */

static st_status parse_nvinfo(const char *name, const uint8_t *image, const st_section *s, unsigned idx,
			      size_t kernel, st_cubin_view *v, size_t *cap, st_error *err)
{
	const uint8_t *p = image + s->offset;
	size_t off = 0;
	while (off < s->size) {
		if (s->size - off < 4)
			return st_error_set(err, ST_EFORMAT, "%s: section %s: truncated record at offset 0x%zx", name,
					    s->name, off);
		st_nvinfo r = {.kernel = kernel, .section = idx, .offset = off, .format = p[off], .attr = p[off + 1]};
		r.name = st_eiattr_name(r.attr);
		size_t len = 4;
		switch (r.format) {
		case 1: /* NVAL */
			break;
		case 2: /* BVAL */
			r.value = p[off + 2];
			break;
		case 3: /* HVAL */
			r.value = (uint32_t)p[off + 2] | (uint32_t)p[off + 3] << 8;
			break;
		case 4: /* SVAL */
			r.size = (size_t)p[off + 2] | (size_t)p[off + 3] << 8;
			if (r.size > s->size - off - 4)
				return st_error_set(err, ST_EFORMAT,
						    "%s: section %s: record %s at offset 0x%zx: payload of %zu bytes "
						    "runs past the section end",
						    name, s->name, r.name ? r.name : "(unknown)", off, r.size);
			r.payload = p + off + 4;
			len += r.size;
			break;
		default:
			return st_error_set(err, ST_EFORMAT, "%s: section %s: record at offset 0x%zx has unknown format %u",
					    name, s->name, off, r.format);
		}
		void *q = grow(v->nvinfo, cap, v->nnvinfo, sizeof *v->nvinfo);
		if (!q)
			return st_error_set(err, ST_ENOMEM, "out of memory");
		v->nvinfo = q;
		v->nvinfo[v->nnvinfo++] = r;
		off += len;
	}
	return ST_OK;
}

/* ---- the whole file ---- */

static st_status check_header(const char *name, const uint8_t *image, size_t size, unsigned *sm, unsigned *osabi,
			      uint32_t *eflags, st_error *err)
{
	if (size < 64)
		return st_error_set(err, ST_EFORMAT, "%s: truncated: %zu bytes is too short for an ELF header", name, size);
	if (memcmp(image, "\177ELF", 4) != 0)
		return st_error_set(err, ST_EFORMAT, "%s: not an ELF file (wrong magic)", name);
	if (image[EI_CLASS] != ELFCLASS64)
		return st_error_set(err, ST_EUNSUPPORTED, "%s: not a 64-bit ELF (class %u)", name, image[EI_CLASS]);
	if (image[EI_DATA] != ELFDATA2LSB)
		return st_error_set(err, ST_EUNSUPPORTED, "%s: not a little-endian ELF", name);
	unsigned machine = (unsigned)image[18] | (unsigned)image[19] << 8;
	if (machine != ST_EM_CUDA)
		return st_error_set(err, ST_EUNSUPPORTED, "%s: not a CUDA cubin (e_machine %u, expected 190)", name,
				    machine);
	*osabi = image[EI_OSABI];
	*eflags = st_le32(image + 48);
	if (*osabi == 0x33)
		*sm = *eflags & 0xff;
	else if (*osabi == 0x41)
		*sm = (*eflags >> 8) & 0xff;
	else
		return st_error_set(err, ST_EUNSUPPORTED, "%s: unknown cubin ELF flavour (EI_OSABI 0x%x)", name, *osabi);
	if (*sm == 0)
		return st_error_set(err, ST_EFORMAT, "%s: e_flags 0x%x name no SM", name, *eflags);
	return ST_OK;
}

static size_t kernel_by_section(const st_cubin_view *v, unsigned idx)
{
	if (idx < v->nsections)
		return v->sections[idx].kernel;
	return ST_CUBIN_NONE;
}

st_status st_cubin_parse(const char *name, const uint8_t *image, size_t size, unsigned *sm, unsigned *osabi,
			 uint32_t *eflags, st_cubin_view *v, st_error *err)
{
	memset(v, 0, sizeof *v);
	st_status rc = check_header(name, image, size, sm, osabi, eflags, err);
	if (rc)
		return rc;
	/* libelf gets its own scratch copy; we never keep pointers into it. */
	char *scratch = malloc(size);
	if (!scratch)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	memcpy(scratch, image, size);
	elf_version(EV_CURRENT);
	Elf *elf = elf_memory(scratch, size);
	size_t shnum = 0, shstrndx = 0;
	size_t nvcap = 0, relcap = 0, constcap = 0, kcap = 0;
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		rc = st_error_set(err, ST_EFORMAT, "%s: libelf cannot read it: %s", name, elf_errmsg(-1));
		goto out;
	}
	GElf_Ehdr eh;
	if (!gelf_getehdr(elf, &eh)) {
		rc = st_error_set(err, ST_EFORMAT, "%s: bad ELF header: %s", name, elf_errmsg(-1));
		goto out;
	}
	if (eh.e_shoff == 0 || eh.e_shentsize != sizeof(Elf64_Shdr)) {
		rc = st_error_set(err, ST_EFORMAT, "%s: no section header table (e_shoff 0x%llx, e_shentsize %u)", name,
				  (unsigned long long)eh.e_shoff, eh.e_shentsize);
		goto out;
	}
	if (eh.e_shoff > size) {
		rc = st_error_set(err, ST_EFORMAT,
				  "%s: truncated: the section header table at offset 0x%llx lies past the end (%zu bytes)", name,
				  (unsigned long long)eh.e_shoff, size);
		goto out;
	}
	if (eh.e_phnum && (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > size ||
			   eh.e_phnum > (size - eh.e_phoff) / sizeof(Elf64_Phdr))) {
		rc = st_error_set(err, ST_EFORMAT, "%s: truncated: %u program headers at offset 0x%llx do not fit in %zu bytes",
				  name, eh.e_phnum, (unsigned long long)eh.e_phoff, size);
		goto out;
	}
	for (size_t i = 0; i < eh.e_phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_offset > size || ph.p_filesz > size - ph.p_offset) {
			rc = st_error_set(err, ST_EFORMAT, "%s: program header %zu: file range out of bounds", name, i);
			goto out;
		}
	}
	if (elf_getshdrnum(elf, &shnum) != 0 || elf_getshdrstrndx(elf, &shstrndx) != 0) {
		rc = st_error_set(err, ST_EFORMAT, "%s: bad section header table: %s", name, elf_errmsg(-1));
		goto out;
	}
	if (shnum == 0 || shnum > (size - eh.e_shoff) / sizeof(Elf64_Shdr)) {
		rc = st_error_set(err, ST_EFORMAT, "%s: truncated: %zu section headers at offset 0x%llx do not fit in %zu bytes",
				  name, shnum, (unsigned long long)eh.e_shoff, size);
		goto out;
	}
	v->sections = calloc(shnum, sizeof *v->sections);
	if (!v->sections) {
		rc = st_error_set(err, ST_ENOMEM, "out of memory");
		goto out;
	}
	v->nsections = shnum;

	/* Sections. */
	for (size_t i = 0; i < shnum; i++) {
		Elf_Scn *scn = elf_getscn(elf, i);
		GElf_Shdr sh;
		if (!scn || !gelf_getshdr(scn, &sh)) {
			rc = st_error_set(err, ST_EFORMAT, "%s: section %zu: bad header: %s", name, i, elf_errmsg(-1));
			goto out;
		}
		const char *sname = i ? elf_strptr(elf, shstrndx, sh.sh_name) : "";
		if (!sname) {
			rc = st_error_set(err, ST_EFORMAT, "%s: section %zu: name offset 0x%x out of range", name, i,
					  sh.sh_name);
			goto out;
		}
		st_section *s = &v->sections[i];
		size_t off;
		if ((rc = pool_add(v, sname, &off))) {
			st_error_set(err, rc, "out of memory");
			goto out;
		}
		s->name = (const char *)(uintptr_t)off;
		sname = v->strings + off; /* the printable copy, for messages (valid until the next pool_add) */
		s->type = sh.sh_type;
		s->link = sh.sh_link;
		s->info = sh.sh_info;
		s->flags = sh.sh_flags;
		s->offset = sh.sh_offset;
		s->size = sh.sh_size;
		s->entsize = sh.sh_entsize;
		s->addralign = sh.sh_addralign;
		s->kernel = ST_CUBIN_NONE;
		if (i && sh.sh_type != SHT_NOBITS && (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset)) {
			rc = st_error_set(err, ST_EFORMAT,
					  "%s: section %s: offset 0x%llx + size 0x%llx runs past the file end (0x%zx)", name,
					  sname, (unsigned long long)sh.sh_offset, (unsigned long long)sh.sh_size, size);
			goto out;
		}
		if (sh.sh_type == SHT_SYMTAB) {
			if (v->symtab) {
				rc = st_error_set(err, ST_EUNSUPPORTED, "%s: more than one .symtab", name);
				goto out;
			}
			v->symtab = (unsigned)i;
		}
		if (sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_EXECINSTR) && !strncmp(sname, ".text.", 6)) {
			if (sh.sh_size % 16) {
				rc = st_error_set(err, ST_EFORMAT, "%s: section %s: size 0x%llx is not a multiple of 16",
						  name, sname, (unsigned long long)sh.sh_size);
				goto out;
			}
			void *q = grow(v->kernels, &kcap, v->nkernels, sizeof *v->kernels);
			if (!q) {
				rc = st_error_set(err, ST_ENOMEM, "out of memory");
				goto out;
			}
			v->kernels = q;
			st_kernel_info *k = &v->kernels[v->nkernels];
			memset(k, 0, sizeof *k);
			k->name = (const char *)(uintptr_t)(off + 6);
			k->section = (unsigned)i;
			k->file_offset = sh.sh_offset;
			k->size = sh.sh_size;
			k->insn_count = sh.sh_size / 16;
			k->symbol = sh.sh_info & 0xffffff; /* sm_8x keep the register count in bits 24..31 */
			s->kernel = v->nkernels++;
		}
	}

	/* Symbols. */
	if (v->symtab) {
		st_section *s = &v->sections[v->symtab];
		Elf_Scn *scn = elf_getscn(elf, v->symtab);
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t n = s->entsize == sizeof(Elf64_Sym) ? s->size / sizeof(Elf64_Sym) : 0;
		if (!d || s->entsize != sizeof(Elf64_Sym) || s->size % sizeof(Elf64_Sym)) {
			rc = st_error_set(err, ST_EFORMAT, "%s: .symtab: bad entry size or data", name);
			goto out;
		}
		v->symbols = calloc(n ? n : 1, sizeof *v->symbols);
		if (!v->symbols) {
			rc = st_error_set(err, ST_ENOMEM, "out of memory");
			goto out;
		}
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			if (!gelf_getsym(d, (int)i, &sym)) {
				rc = st_error_set(err, ST_EFORMAT, "%s: .symtab: symbol %zu unreadable", name, i);
				goto out;
			}
			const char *sn = sym.st_name ? elf_strptr(elf, s->link, sym.st_name) : "";
			if (!sn) {
				rc = st_error_set(err, ST_EFORMAT, "%s: .symtab: symbol %zu: name offset 0x%x out of range",
						  name, i, sym.st_name);
				goto out;
			}
			size_t off;
			if ((rc = pool_add(v, sn, &off))) {
				st_error_set(err, rc, "out of memory");
				goto out;
			}
			st_symbol *y = &v->symbols[i];
			y->name = (const char *)(uintptr_t)off;
			y->value = sym.st_value;
			y->size = sym.st_size;
			y->type = GELF_ST_TYPE(sym.st_info);
			y->bind = GELF_ST_BIND(sym.st_info);
			y->other = sym.st_other;
			y->shndx = sym.st_shndx;
		}
		v->nsymbols = n;
	}
	for (size_t k = 0; k < v->nkernels; k++) {
		st_kernel_info *ki = &v->kernels[k];
		if (ki->symbol >= v->nsymbols) {
			rc = st_error_set(err, ST_EFORMAT, "%s: section .text.%s: symbol index %u out of range (%zu symbols)",
					  name, v->strings + (size_t)(uintptr_t)ki->name, ki->symbol, v->nsymbols);
			goto out;
		}
		ki->entry = ki->symbol && (v->symbols[ki->symbol].other & ST_STO_CUDA_ENTRY);
	}

	/* .nv.info, relocations, constant banks. */
	for (size_t i = 0; i < shnum; i++) {
		st_section *s = &v->sections[i];
		const char *sname = v->strings + (size_t)(uintptr_t)s->name;
		if (s->type == ST_SHT_CUDA_INFO) {
			size_t kernel = ST_CUBIN_NONE;
			if (strcmp(sname, ".nv.info") != 0) {
				kernel = kernel_by_section(v, s->info);
				if (kernel == ST_CUBIN_NONE) {
					rc = st_error_set(err, ST_EFORMAT, "%s: section %s: sh_info %u names no kernel",
							  name, sname, s->info);
					goto out;
				}
			}
			st_section tmp = *s;
			tmp.name = sname;
			if ((rc = parse_nvinfo(name, image, &tmp, (unsigned)i, kernel, v, &nvcap, err)))
				goto out;
		} else if (s->type == SHT_REL || s->type == SHT_RELA) {
			bool rela = s->type == SHT_RELA;
			size_t esz = rela ? sizeof(Elf64_Rela) : sizeof(Elf64_Rel);
			if (s->entsize != esz || s->size % esz) {
				rc = st_error_set(err, ST_EFORMAT, "%s: section %s: bad entry size %llu", name, sname,
						  (unsigned long long)s->entsize);
				goto out;
			}
			if (s->info >= shnum || (s->size && s->link != v->symtab)) {
				rc = st_error_set(err, ST_EFORMAT, "%s: section %s: sh_info %u or sh_link %u out of range",
						  name, sname, s->info, s->link);
				goto out;
			}
			Elf_Data *d = elf_getdata(elf_getscn(elf, i), NULL);
			size_t n = s->size / esz;
			if (n && !d) {
				rc = st_error_set(err, ST_EFORMAT, "%s: section %s: unreadable", name, sname);
				goto out;
			}
			const st_section *t = &v->sections[s->info];
			for (size_t j = 0; j < n; j++) {
				GElf_Rela r = {0};
				if (rela ? !gelf_getrela(d, (int)j, &r) : !gelf_getrel(d, (int)j, (GElf_Rel *)&r)) {
					rc = st_error_set(err, ST_EFORMAT, "%s: section %s: entry %zu unreadable", name,
							  sname, j);
					goto out;
				}
				void *q = grow(v->relocs, &relcap, v->nrelocs, sizeof *v->relocs);
				if (!q) {
					rc = st_error_set(err, ST_ENOMEM, "out of memory");
					goto out;
				}
				v->relocs = q;
				size_t ecap = relcap;
				q = realloc(v->reloc_entry, ecap * sizeof *v->reloc_entry);
				if (!q) {
					rc = st_error_set(err, ST_ENOMEM, "out of memory");
					goto out;
				}
				v->reloc_entry = q;
				v->reloc_entry[v->nrelocs] = s->offset + j * esz;
				st_reloc *x = &v->relocs[v->nrelocs];
				x->section = (unsigned)i;
				x->target = s->info;
				x->kernel = t->kernel;
				x->offset = r.r_offset;
				x->type = (unsigned)GELF_R_TYPE(r.r_info);
				x->type_name = st_reloc_type_name(x->type);
				x->symbol = (unsigned)GELF_R_SYM(r.r_info);
				x->addend = rela ? r.r_addend : 0;
				x->rela = rela;
				if (x->symbol >= v->nsymbols) {
					rc = st_error_set(err, ST_EFORMAT, "%s: section %s: entry %zu: symbol %u out of range",
							  name, sname, j, x->symbol);
					goto out;
				}
				if (t->type != SHT_NOBITS && (x->offset > t->size || t->size - x->offset < 4)) {
					rc = st_error_set(err, ST_EFORMAT,
							  "%s: section %s: entry %zu: offset 0x%llx outside %s", name,
							  sname, j, (unsigned long long)x->offset,
							  v->strings + (size_t)(uintptr_t)t->name);
					goto out;
				}
				x->symbol_name = v->symbols[x->symbol].name; /* still an offset */
				x->target_name = t->name;                    /* likewise */
				v->nrelocs++;
			}
		} else if (!strncmp(sname, ".nv.constant", 12) && sname[12] >= '0' && sname[12] <= '9') {
			char *end;
			unsigned long bank = strtoul(sname + 12, &end, 10);
			if (*end != 0 && *end != '.')
				continue;
			void *q = grow(v->consts, &constcap, v->nconsts, sizeof *v->consts);
			if (!q) {
				rc = st_error_set(err, ST_ENOMEM, "out of memory");
				goto out;
			}
			v->consts = q;
			st_const_bank *b = &v->consts[v->nconsts++];
			b->section_name = s->name;
			b->section = (unsigned)i;
			b->bank = (unsigned)bank;
			b->kernel = ST_CUBIN_NONE;
			if (*end == '.') {
				b->kernel = kernel_by_section(v, s->info);
				for (size_t k = 0; b->kernel == ST_CUBIN_NONE && k < v->nkernels; k++)
					if (!strcmp(end + 1, v->strings + (size_t)(uintptr_t)v->kernels[k].name))
						b->kernel = k;
			}
			b->size = s->size;
			b->data = s->type == SHT_NOBITS ? NULL : image + s->offset;
		}
	}

	/* Turn pool offsets into pointers now that the pool is final. */
	for (size_t i = 0; i < v->nsections; i++)
		OFF2PTR(v, v->sections[i].name);
	for (size_t i = 0; i < v->nkernels; i++)
		OFF2PTR(v, v->kernels[i].name);
	for (size_t i = 0; i < v->nsymbols; i++)
		OFF2PTR(v, v->symbols[i].name);
	for (size_t i = 0; i < v->nrelocs; i++) {
		OFF2PTR(v, v->relocs[i].symbol_name);
		OFF2PTR(v, v->relocs[i].target_name);
	}
	for (size_t i = 0; i < v->nconsts; i++)
		OFF2PTR(v, v->consts[i].section_name);
	v->refs = calloc(v->nkernels ? v->nkernels : 1, sizeof *v->refs);
	if (!v->refs)
		rc = st_error_set(err, ST_ENOMEM, "out of memory");
out:
	if (elf)
		elf_end(elf);
	free(scratch);
	if (rc)
		st_cubin_view_free(v);
	return rc;
}

/* ---- public entry points ---- */

st_status st_cubin_open_mem(const void *data, size_t size, const char *name, st_cubin **out, st_error *err)
{
	*out = NULL;
	if (!data && size)
		return st_error_set(err, ST_EINVAL, "st_cubin_open_mem: NULL data");
	st_cubin *c = calloc(1, sizeof *c);
	if (!c)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	c->name = strdup(name ? name : "<memory>");
	c->image = malloc(size ? size : 1);
	c->orig = malloc(size ? size : 1);
	if (!c->name || !c->image || !c->orig) {
		st_cubin_free(c);
		return st_error_set(err, ST_ENOMEM, "out of memory");
	}
	if (size) {
		memcpy(c->image, data, size);
		memcpy(c->orig, data, size);
	}
	c->size = size;
	st_status rc = st_cubin_parse(c->name, c->image, c->size, &c->sm, &c->osabi, &c->eflags, &c->v, err);
	if (rc) {
		st_cubin_free(c);
		return rc;
	}
	*out = c;
	return ST_OK;
}

st_status st_cubin_open_file(const char *path, st_cubin **out, st_error *err)
{
	*out = NULL;
	uint8_t *data;
	size_t size;
	st_status rc = st_read_file(path, &data, &size, err);
	if (rc)
		return rc;
	rc = st_cubin_open_mem(data, size, path, out, err);
	free(data);
	return rc;
}

void st_cubin_free(st_cubin *c)
{
	if (!c)
		return;
	if (c->cum) {
		for (size_t k = 0; k < c->v.nkernels; k++)
			free(c->cum[k]);
		free(c->cum);
	}
	if (c->ins) {
		for (size_t k = 0; k < c->v.nkernels; k++)
			free(c->ins[k]);
		free(c->ins);
	}
	st_cubin_view_free(&c->v);
	st_cubin_view_free(&c->ov);
	free(c->image);
	free(c->orig);
	free(c->name);
	free(c);
}

const char *st_cubin_name(const st_cubin *c) { return c->name; }

const uint8_t *st_cubin_data(const st_cubin *c, size_t *size)
{
	if (size)
		*size = c->size;
	return c->image;
}

st_status st_cubin_write_file(const st_cubin *c, const char *path, st_error *err)
{
	return st_write_file_atomic(path, c->image, c->size, err);
}

unsigned st_cubin_sm(const st_cubin *c) { return c->sm; }
unsigned st_cubin_osabi(const st_cubin *c) { return c->osabi; }
uint32_t st_cubin_eflags(const st_cubin *c) { return c->eflags; }

size_t st_cubin_kernel_count(const st_cubin *c) { return c->v.nkernels; }

const st_kernel_info *st_cubin_kernel(const st_cubin *c, size_t k)
{
	return k < c->v.nkernels ? &c->v.kernels[k] : NULL;
}

size_t st_cubin_find_kernel(const st_cubin *c, const char *name)
{
	for (size_t k = 0; k < c->v.nkernels; k++)
		if (!strcmp(c->v.kernels[k].name, name))
			return k;
	return ST_CUBIN_NONE;
}

const uint8_t *st_cubin_code(const st_cubin *c, size_t k, size_t *size)
{
	if (k >= c->v.nkernels) {
		if (size)
			*size = 0;
		return NULL;
	}
	if (size)
		*size = c->v.kernels[k].size;
	return c->image + c->v.kernels[k].file_offset;
}

void st_cubin_insn(const st_cubin *c, size_t k, size_t slot, uint64_t *lo, uint64_t *hi)
{
	*lo = *hi = 0;
	if (k >= c->v.nkernels || slot >= c->v.kernels[k].insn_count)
		return;
	const uint8_t *p = c->image + c->v.kernels[k].file_offset + slot * 16;
	*lo = st_le64(p);
	*hi = st_le64(p + 8);
}

size_t st_cubin_nvinfo_count(const st_cubin *c) { return c->v.nnvinfo; }
const st_nvinfo *st_cubin_nvinfo(const st_cubin *c, size_t i) { return i < c->v.nnvinfo ? &c->v.nvinfo[i] : NULL; }
size_t st_cubin_symbol_count(const st_cubin *c) { return c->v.nsymbols; }
const st_symbol *st_cubin_symbol(const st_cubin *c, size_t i) { return i < c->v.nsymbols ? &c->v.symbols[i] : NULL; }
size_t st_cubin_reloc_count(const st_cubin *c) { return c->v.nrelocs; }
const st_reloc *st_cubin_reloc(const st_cubin *c, size_t i) { return i < c->v.nrelocs ? &c->v.relocs[i] : NULL; }
size_t st_cubin_const_count(const st_cubin *c) { return c->v.nconsts; }
const st_const_bank *st_cubin_const(const st_cubin *c, size_t i) { return i < c->v.nconsts ? &c->v.consts[i] : NULL; }
