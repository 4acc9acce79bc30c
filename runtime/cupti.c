/* CUPTI PC sampling in the worker (runtime/cupti.h).  The library is dlopen'ed; the
 * types come from the real cupti_pcsampling.h (ST_HAVE_CUPTI, set by CMake when found). */
#include "cupti.h"

#include <stdlib.h>
#include <string.h>

#ifndef ST_HAVE_CUPTI

st_status st_cupti_open(st_cupti **out, st_error *err)
{
	*out = NULL;
	return st_error_set(err, ST_EUNSUPPORTED,
			    "sasstune was built without the CUPTI headers (cupti_pcsampling.h): no PC sampling "
			    "(rebuild with CUDA_HOME or the pip wheel nvidia-cuda-cupti installed; docs/profile.md)");
}
void st_cupti_close(st_cupti *c) { (void)c; }
const char *st_cupti_path(const st_cupti *c) { return (void)c, ""; }
st_status st_cupti_enable(st_cupti *c, void *ctx, unsigned period, st_error *err)
{
	return st_error_set(err, ST_EUNSUPPORTED, "sasstune was built without CUPTI");
}
st_status st_cupti_start(st_cupti *c, st_error *err) { return st_error_set(err, ST_EUNSUPPORTED, "no CUPTI"); }
st_status st_cupti_stop(st_cupti *c, st_profile *prof, st_error *err)
{
	return st_error_set(err, ST_EUNSUPPORTED, "no CUPTI");
}
void st_cupti_disable(st_cupti *c, st_profile *prof) { (void)c, (void)prof; }

#else

#include <cupti_pcsampling.h>
#include <dlfcn.h>
#include <stdio.h>

#define COLLECT_PCS 4096
#define MAX_DRAINS 100000

struct st_cupti {
	void *lib;
	char *path;
	CUcontext ctx;
	bool enabled;
	size_t nreasons;
	uint32_t *reason_index;
	char **reason_names; /* CUPTI's names, CUPTI_STALL_REASON_STRING_SIZE each */
	CUpti_PCSamplingData flush, get;
	CUptiResult (*GetNumStallReasons)(CUpti_PCSamplingGetNumStallReasonsParams *);
	CUptiResult (*GetStallReasons)(CUpti_PCSamplingGetStallReasonsParams *);
	CUptiResult (*SetConfigurationAttribute)(CUpti_PCSamplingConfigurationInfoParams *);
	CUptiResult (*Enable)(CUpti_PCSamplingEnableParams *);
	CUptiResult (*Disable)(CUpti_PCSamplingDisableParams *);
	CUptiResult (*Start)(CUpti_PCSamplingStartParams *);
	CUptiResult (*Stop)(CUpti_PCSamplingStopParams *);
	CUptiResult (*GetData)(CUpti_PCSamplingGetDataParams *);
	CUptiResult (*GetResultString)(CUptiResult, const char **);
};

static st_status cupti_err(const st_cupti *c, st_error *err, CUptiResult r, const char *what)
{
	const char *s = NULL;
	if (c->GetResultString)
		c->GetResultString(r, &s);
	st_status code = r == CUPTI_ERROR_NOT_SUPPORTED ? ST_EUNSUPPORTED : ST_EDEVICE;
	if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
		return st_error_set(err, code, "%s: CUPTI error %d (%s): profiling needs permission "
				    "(NVreg_RestrictProfilingToAdminUsers=0, or run as root)", what, (int)r, s ? s : "?");
	return st_error_set(err, code, "%s: CUPTI error %d (%s)", what, (int)r, s ? s : "?");
}

st_status st_cupti_open(st_cupti **out, st_error *err)
{
	*out = NULL;
	st_cupti *c = calloc(1, sizeof *c);
	if (!c)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	st_status rc = st_cupti_find_and_open(&c->lib, &c->path, err);
	struct { void *slot; const char *name; } t[] = {
		{&c->GetNumStallReasons, "cuptiPCSamplingGetNumStallReasons"},
		{&c->GetStallReasons, "cuptiPCSamplingGetStallReasons"},
		{&c->SetConfigurationAttribute, "cuptiPCSamplingSetConfigurationAttribute"},
		{&c->Enable, "cuptiPCSamplingEnable"}, {&c->Disable, "cuptiPCSamplingDisable"},
		{&c->Start, "cuptiPCSamplingStart"}, {&c->Stop, "cuptiPCSamplingStop"},
		{&c->GetData, "cuptiPCSamplingGetData"}, {&c->GetResultString, "cuptiGetResultString"},
	};
	for (size_t i = 0; rc == ST_OK && i < sizeof t / sizeof *t; i++) {
		void *fn = dlsym(c->lib, t[i].name);
		memcpy(t[i].slot, &fn, sizeof fn); /* a function pointer of the same size */
		if (!fn)
			rc = st_error_set(err, ST_EUNSUPPORTED, "CUPTI %s has no %s (too old for PC sampling?)", c->path,
					  t[i].name);
	}
	if (rc != ST_OK) {
		st_cupti_close(c);
		return rc;
	}
	*out = c;
	return ST_OK;
}

static void free_data(CUpti_PCSamplingData *d)
{
	for (size_t i = 0; d->pPcData && i < d->collectNumPcs; i++)
		free(d->pPcData[i].stallReason);
	free(d->pPcData);
	memset(d, 0, sizeof *d);
}

void st_cupti_close(st_cupti *c)
{
	if (!c)
		return;
	if (c->enabled)
		st_cupti_disable(c, NULL);
	free_data(&c->flush);
	free_data(&c->get);
	for (size_t i = 0; c->reason_names && i < c->nreasons; i++)
		free(c->reason_names[i]);
	free(c->reason_names);
	free(c->reason_index);
	if (c->lib)
		dlclose(c->lib);
	free(c->path);
	free(c);
}

const char *st_cupti_path(const st_cupti *c) { return c->path; }

static st_status alloc_data(CUpti_PCSamplingData *d, size_t nreasons, st_error *err)
{
	memset(d, 0, sizeof *d);
	d->size = sizeof *d;
	d->collectNumPcs = COLLECT_PCS;
	if (!(d->pPcData = calloc(COLLECT_PCS, sizeof *d->pPcData)))
		return st_error_set(err, ST_ENOMEM, "out of memory");
	for (size_t i = 0; i < COLLECT_PCS; i++) {
		d->pPcData[i].size = sizeof d->pPcData[i];
		if (!(d->pPcData[i].stallReason = calloc(nreasons ? nreasons : 1, sizeof *d->pPcData[i].stallReason)))
			return st_error_set(err, ST_ENOMEM, "out of memory");
	}
	return ST_OK;
}

/* The stall reasons of this device: CUPTI's indices and names. */
static st_status read_reasons(st_cupti *c, st_error *err)
{
	CUpti_PCSamplingGetNumStallReasonsParams np = {.size = CUpti_PCSamplingGetNumStallReasonsParamsSize,
						       .ctx = c->ctx, .numStallReasons = &c->nreasons};
	CUptiResult r = c->GetNumStallReasons(&np);
	if (r != CUPTI_SUCCESS)
		return cupti_err(c, err, r, "cuptiPCSamplingGetNumStallReasons");
	if (!c->nreasons || c->nreasons > 1024)
		return st_error_set(err, ST_EDEVICE, "CUPTI reports %zu stall reasons", c->nreasons);
	c->reason_index = calloc(c->nreasons, sizeof *c->reason_index);
	c->reason_names = calloc(c->nreasons, sizeof *c->reason_names);
	if (!c->reason_index || !c->reason_names)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	for (size_t i = 0; i < c->nreasons; i++)
		if (!(c->reason_names[i] = calloc(1, CUPTI_STALL_REASON_STRING_SIZE)))
			return st_error_set(err, ST_ENOMEM, "out of memory");
	CUpti_PCSamplingGetStallReasonsParams sp = {.size = CUpti_PCSamplingGetStallReasonsParamsSize, .ctx = c->ctx,
						    .numStallReasons = c->nreasons,
						    .stallReasonIndex = c->reason_index, .stallReasons = c->reason_names};
	r = c->GetStallReasons(&sp);
	if (r != CUPTI_SUCCESS)
		return cupti_err(c, err, r, "cuptiPCSamplingGetStallReasons");
	for (size_t i = 0; i < c->nreasons; i++)
		c->reason_names[i][CUPTI_STALL_REASON_STRING_SIZE - 1] = 0;
	return ST_OK;
}

static st_status configure(st_cupti *c, unsigned period, st_error *err)
{
	CUpti_PCSamplingConfigurationInfo cfg[8];
	size_t n = 0;
	memset(cfg, 0, sizeof cfg);
	cfg[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
	cfg[n].attributeData.stallReasonData.stallReasonCount = c->nreasons;
	cfg[n++].attributeData.stallReasonData.pStallReasonIndex = c->reason_index;
	cfg[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
	cfg[n++].attributeData.collectionModeData.collectionMode = CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED;
	cfg[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
	cfg[n++].attributeData.enableStartStopControlData.enableStartStopControl = 1;
	cfg[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT;
	cfg[n++].attributeData.outputDataFormatData.outputDataFormat = CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
	cfg[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
	cfg[n++].attributeData.samplingDataBufferData.samplingDataBuffer = &c->flush;
	cfg[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE;
	cfg[n++].attributeData.scratchBufferSizeData.scratchBufferSize = 16u << 20;
	if (period) {
		cfg[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
		cfg[n++].attributeData.samplingPeriodData.samplingPeriod = period;
	}
	CUpti_PCSamplingConfigurationInfoParams p = {.size = CUpti_PCSamplingConfigurationInfoParamsSize,
						     .ctx = c->ctx, .numAttributes = n,
						     .pPCSamplingConfigurationInfo = cfg};
	CUptiResult r = c->SetConfigurationAttribute(&p);
	return r == CUPTI_SUCCESS ? ST_OK : cupti_err(c, err, r, "cuptiPCSamplingSetConfigurationAttribute");
}

st_status st_cupti_enable(st_cupti *c, void *ctx, unsigned period, st_error *err)
{
	if (c->enabled)
		return st_error_set(err, ST_EINVAL, "PC sampling is already enabled");
	c->ctx = (CUcontext)ctx;
	CUpti_PCSamplingEnableParams ep = {.size = CUpti_PCSamplingEnableParamsSize, .ctx = c->ctx};
	CUptiResult r = c->Enable(&ep);
	if (r != CUPTI_SUCCESS)
		return cupti_err(c, err, r, "cuptiPCSamplingEnable");
	c->enabled = true;
	st_status rc = c->reason_index ? ST_OK : read_reasons(c, err);
	if (rc == ST_OK && !c->flush.pPcData)
		rc = alloc_data(&c->flush, c->nreasons, err);
	if (rc == ST_OK && !c->get.pPcData)
		rc = alloc_data(&c->get, c->nreasons, err);
	if (rc == ST_OK)
		rc = configure(c, period, err);
	if (rc != ST_OK)
		st_cupti_disable(c, NULL);
	return rc;
}

st_status st_cupti_start(st_cupti *c, st_error *err)
{
	CUpti_PCSamplingStartParams p = {.size = CUpti_PCSamplingStartParamsSize, .ctx = c->ctx};
	CUptiResult r = c->Start(&p);
	return r == CUPTI_SUCCESS ? ST_OK : cupti_err(c, err, r, "cuptiPCSamplingStart");
}

static const char *reason_name(const st_cupti *c, uint32_t index)
{
	for (size_t i = 0; i < c->nreasons; i++)
		if (c->reason_index[i] == index)
			return c->reason_names[i];
	return NULL;
}

/* Add the PCs of one buffer to prof and clear the buffer's counts for the next fill. */
static st_status take(const st_cupti *c, CUpti_PCSamplingData *d, st_profile *prof, st_error *err)
{
	st_profile_meta *m = st_profile_meta_of(prof);
	m->total_samples += d->totalSamples;
	m->dropped_samples += d->droppedSamples;
	st_status rc = ST_OK;
	size_t n = d->totalNumPcs < d->collectNumPcs ? d->totalNumPcs : d->collectNumPcs;
	for (size_t i = 0; i < n && rc == ST_OK; i++) {
		const CUpti_PCSamplingPCData *pc = &d->pPcData[i];
		const char *fn = pc->functionName && pc->functionName[0] ? pc->functionName : "?";
		size_t k = pc->stallReasonCount < c->nreasons ? pc->stallReasonCount : c->nreasons;
		for (size_t j = 0; j < k && rc == ST_OK && pc->pcOffset <= UINT32_MAX; j++) {
			const char *name = reason_name(c, pc->stallReason[j].pcSamplingStallReasonIndex);
			if (name && pc->stallReason[j].samples)
				rc = st_profile_add(prof, fn, (uint32_t)pc->pcOffset, name, pc->stallReason[j].samples, err);
		}
	}
	d->totalNumPcs = 0;
	d->totalSamples = d->droppedSamples = 0;
	return rc;
}

st_status st_cupti_stop(st_cupti *c, st_profile *prof, st_error *err)
{
	CUpti_PCSamplingStopParams sp = {.size = CUpti_PCSamplingStopParamsSize, .ctx = c->ctx};
	CUptiResult r = c->Stop(&sp);
	if (r != CUPTI_SUCCESS)
		return cupti_err(c, err, r, "cuptiPCSamplingStop");
	st_status rc = ST_OK;
	for (int i = 0; i < MAX_DRAINS && rc == ST_OK; i++) {
		CUpti_PCSamplingGetDataParams gp = {.size = CUpti_PCSamplingGetDataParamsSize, .ctx = c->ctx,
						    .pcSamplingData = &c->get};
		c->get.remainingNumPcs = 0;
		r = c->GetData(&gp);
		if (r != CUPTI_SUCCESS)
			return cupti_err(c, err, r, "cuptiPCSamplingGetData");
		if (c->get.hardwareBufferFull)
			return st_error_set(err, ST_EDEVICE, "CUPTI's hardware buffer overflowed: use a longer sampling period");
		bool more = c->get.remainingNumPcs > 0;
		rc = take(c, &c->get, prof, err);
		if (!more)
			break;
	}
	return rc;
}

void st_cupti_disable(st_cupti *c, st_profile *prof)
{
	if (!c->enabled)
		return;
	CUpti_PCSamplingDisableParams dp = {.size = CUpti_PCSamplingDisableParamsSize, .ctx = c->ctx};
	c->Disable(&dp);
	c->enabled = false;
	if (prof && c->flush.pPcData)
		take(c, &c->flush, prof, NULL);
}

#endif
