/* A mock CUPTI (loaded through SASSTUNE_CUPTI) for the CPU tests of `sasstune profile`:
 * the PC sampling entry points, built against the real cupti_pcsampling.h.  Four stall
 * reasons (long_scoreboard, its _not_issued subset, selected, lg_throttle).  After a
 * Start/Stop range, GetData returns two PCs of add_kernel in two calls (offset 0x1d0:
 * long_scoreboard 300 + not_issued 290 + selected 5; then 0x180: lg_throttle 40), and
 * Disable flushes one more PC into the configured buffer (0x220: long_scoreboard 200).
 * MOCK_CUPTI_ENABLE_ERROR=N makes cuptiPCSamplingEnable return N. */
#include <cupti_pcsampling.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))

static const uint32_t idx[] = {3, 4, 11, 7};
static const char *const names[] = {
	"smsp__pcsamp_warps_issue_stalled_long_scoreboard",
	"smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued",
	"smsp__pcsamp_warps_issue_stalled_selected",
	"smsp__pcsamp_warps_issue_stalled_lg_throttle",
};
static CUpti_PCSamplingData *flush_buf;
static int pending; /* PCs GetData still has to give */
static char fname[] = "add_kernel";

API CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
	*s = r ? "mock CUPTI error" : "success";
	return CUPTI_SUCCESS;
}

API CUptiResult cuptiPCSamplingGetNumStallReasons(CUpti_PCSamplingGetNumStallReasonsParams *p)
{
	*p->numStallReasons = 4;
	return CUPTI_SUCCESS;
}

API CUptiResult cuptiPCSamplingGetStallReasons(CUpti_PCSamplingGetStallReasonsParams *p)
{
	if (p->numStallReasons != 4)
		return CUPTI_ERROR_INVALID_PARAMETER;
	for (size_t i = 0; i < 4; i++) {
		p->stallReasonIndex[i] = idx[i];
		strcpy(p->stallReasons[i], names[i]);
	}
	return CUPTI_SUCCESS;
}

API CUptiResult cuptiPCSamplingSetConfigurationAttribute(CUpti_PCSamplingConfigurationInfoParams *p)
{
	for (size_t i = 0; i < p->numAttributes; i++) {
		CUpti_PCSamplingConfigurationInfo *c = &p->pPCSamplingConfigurationInfo[i];
		if (c->attributeType == CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER)
			flush_buf = c->attributeData.samplingDataBufferData.samplingDataBuffer;
		if (c->attributeType == CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD &&
		    (c->attributeData.samplingPeriodData.samplingPeriod < 5 || c->attributeData.samplingPeriodData.samplingPeriod > 31))
			return CUPTI_ERROR_INVALID_PARAMETER;
	}
	return CUPTI_SUCCESS;
}

API CUptiResult cuptiPCSamplingEnable(CUpti_PCSamplingEnableParams *p)
{
	(void)p;
	const char *e = getenv("MOCK_CUPTI_ENABLE_ERROR");
	return e ? (CUptiResult)atoi(e) : CUPTI_SUCCESS;
}

API CUptiResult cuptiPCSamplingStart(CUpti_PCSamplingStartParams *p) { (void)p; return CUPTI_SUCCESS; }
API CUptiResult cuptiPCSamplingStop(CUpti_PCSamplingStopParams *p) { (void)p; pending = 2; return CUPTI_SUCCESS; }

static void put(CUpti_PCSamplingData *d, uint64_t off, const uint32_t *reasons, const uint32_t *counts, size_t n)
{
	CUpti_PCSamplingPCData *pc = &d->pPcData[0];
	pc->pcOffset = off;
	pc->functionName = fname;
	pc->stallReasonCount = n;
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++) {
		pc->stallReason[i].pcSamplingStallReasonIndex = reasons[i];
		pc->stallReason[i].samples = counts[i];
		total += counts[i];
	}
	d->totalNumPcs = 1;
	d->totalSamples = total;
}

API CUptiResult cuptiPCSamplingGetData(CUpti_PCSamplingGetDataParams *p)
{
	CUpti_PCSamplingData *d = p->pcSamplingData;
	d->totalNumPcs = 0;
	if (pending == 2) {
		put(d, 0x1d0, (const uint32_t[]){3, 4, 11}, (const uint32_t[]){300, 290, 5}, 3);
	} else if (pending == 1) {
		put(d, 0x180, (const uint32_t[]){7}, (const uint32_t[]){40}, 1);
	}
	pending = pending ? pending - 1 : 0;
	d->remainingNumPcs = (size_t)pending;
	return CUPTI_SUCCESS;
}

API CUptiResult cuptiPCSamplingDisable(CUpti_PCSamplingDisableParams *p)
{
	(void)p;
	if (flush_buf)
		put(flush_buf, 0x220, (const uint32_t[]){3}, (const uint32_t[]){200}, 1);
	return CUPTI_SUCCESS;
}
